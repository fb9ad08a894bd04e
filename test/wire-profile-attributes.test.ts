import { describe, expect, it } from 'vitest';
import { nonEmptyString } from '../src/profiles/wire-profile.js';

// Every profile reads a string attribute at its call site as `nonEmptyString(attrs[KEY])` (one
// inline cache a site): a non-empty string is the value, anything else is absent.
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
  });

  it('reads an absent key as undefined, so a fallback key can follow', () => {
    const attrs: Record<string, unknown> = { call_id: 'call_r1_0' };
    expect(nonEmptyString(attrs['tool.call_id'])).toBeUndefined();
    expect(nonEmptyString(attrs['tool.call_id']) ?? nonEmptyString(attrs['call_id'])).toBe('call_r1_0');
  });
});
