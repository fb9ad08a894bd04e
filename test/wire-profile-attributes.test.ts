import { describe, expect, it } from 'vitest';
import { nonEmptyString, stringAttr } from '../src/profiles/wire-profile.js';

// The qwen-code profile reads its attributes at each call site (`nonEmptyString(attrs[KEY])`, one
// inline cache a site) where it called `stringAttr(attrs, KEY)`: the two must read every value alike.
describe('nonEmptyString: the value of an attribute when it is a non-empty string', () => {
  const cases: ReadonlyArray<readonly [string, unknown, string | undefined]> = [
    ['a string', 'call_r1_0', 'call_r1_0'],
    ['a one-character string', 'x', 'x'],
    ['a string of white space (not empty)', ' ', ' '],
    ['the empty string', '', undefined],
    ['undefined (the attribute is absent)', undefined, undefined],
    ['null', null, undefined],
    ['a number', 128, undefined],
    ['zero', 0, undefined],
    ['a boolean', false, undefined],
    ['an array of strings (an OpenTelemetry array attribute)', ['tool_calls'], undefined],
    ['a String object', new String('call_r1_0'), undefined],
  ];
  it.each(cases)('%s', (_name, value, expected) => {
    expect(nonEmptyString(value)).toBe(expected);
    expect(stringAttr({ 'tool.call_id': value }, 'tool.call_id')).toBe(expected);
  });

  it('reads an absent key as undefined, as stringAttr does', () => {
    const attrs: Record<string, unknown> = { call_id: 'call_r1_0' };
    expect(nonEmptyString(attrs['tool.call_id'])).toBeUndefined();
    expect(nonEmptyString(attrs['tool.call_id']) ?? nonEmptyString(attrs['call_id'])).toBe('call_r1_0');
  });
});
