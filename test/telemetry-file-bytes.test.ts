/**
 * Reading a telemetry file from its UTF-8 bytes (what the CLI does) against reading its text:
 * the same records from every real capture, and the same errors at the same positions, counted in
 * characters of the decoded text, when characters before the error take more than one byte; and
 * the Resource that objects of one writer share.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseTelemetryText, TelemetryParseError } from '../src/otlp/telemetry-file.js';
import { parseReplayInput } from '../src/replay/replay-input.js';
import { captures } from './helpers/recorded.js';

/** The error `read` throws (a test failure when it throws none). */
function thrown(read: () => unknown): Error {
  try {
    read();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the read to throw');
}

describe('bytes read as their text is read: every real capture', () => {
  const files = captures();

  it('finds the captures', () => {
    expect(files.length).toBeGreaterThanOrEqual(20);
  });

  it.each(files.map((f) => [f.name, f.path] as const))('%s', (_name, path) => {
    const bytes = readFileSync(path);
    const text = bytes.toString('utf8');
    expect(parseTelemetryText(bytes, path)).toEqual(parseTelemetryText(text, path));
    expect(parseReplayInput([{ text: bytes, file: path }], { reportInputs: true })).toEqual(parseReplayInput([{ text, file: path }], { reportInputs: true }));
  });

  it('a Uint8Array view into a larger buffer reads only its own bytes', () => {
    const path = files.find((f) => f.name.endsWith('acp-enforce.outfile.json'))?.path as string;
    const bytes = readFileSync(path);
    const larger = new Uint8Array(bytes.length + 64).fill(0x7b); // '{' around it would be read as broken JSON
    larger.set(bytes, 32);
    const view = new Uint8Array(larger.buffer, 32, bytes.length);
    expect(parseTelemetryText(view, path)).toEqual(parseTelemetryText(bytes.toString('utf8'), path));
  });
});

describe('errors from bytes: the same message and position as from the text', () => {
  // Positions are 1-based lines and columns in UTF-16 units of the decoded text, written out by
  // hand: `é`, `ü`, `ñ` are two bytes and one unit; `日`, `本` three bytes and one unit; `😀` four
  // bytes and two units (a surrogate pair, of which the message quotes the first).
  it.each([
    { desc: 'a two-byte character between objects (named by its code point)', text: '{"resourceSpans": []}\n  é\n', message: 'x.json:2:3: unexpected character U+00E9 between JSON objects' },
    { desc: 'a four-byte character between objects', text: '{"resourceSpans": []}   😀\n', message: 'x.json:1:25: unexpected character U+1F600 between JSON objects' },
    { desc: 'a printable ASCII character is quoted', text: '{"resourceSpans": []}\n x\n', message: 'x.json:2:2: unexpected character "x" between JSON objects' },
    { desc: 'invalid JSON after three-byte characters on the same line', text: '{"x": "日本"}{"resourceSpans": [,]}\n', message: 'x.json:1:12: invalid JSON in the object that starts here' },
    { desc: 'a truncated object on a line after a two-byte character', text: '{"x": "ü"}\n  {"resourceSpans": [\n', message: 'x.json:2:3: truncated JSON object' },
    { desc: 'invalid JSON in a pretty object holding a two-byte character', text: '{"resourceSpans": []}\n{\n  "name": "ñ",\n  "attributes": {"a": tru}\n}\n', message: 'x.json:2:1: invalid JSON in the object that starts here' },
    { desc: 'a byte order mark after the start (named: it is invisible)', text: '{"resourceSpans": []}\n\ufeff{"resourceSpans": []}\n', message: 'x.json:2:1: unexpected character U+FEFF between JSON objects' },
    { desc: 'an error on the line of a skipped byte order mark counts it as a character', text: '\ufeff{"resourceSpans": []} x', message: 'x.json:1:24: unexpected character "x" between JSON objects' },
  ])('$desc', ({ text, message }) => {
    const fromText = thrown(() => parseTelemetryText(text, 'x.json'));
    expect(fromText).toBeInstanceOf(TelemetryParseError);
    expect(fromText.message).toBe(message);
    const fromBytes = thrown(() => parseTelemetryText(Buffer.from(text, 'utf8'), 'x.json'));
    expect(fromBytes).toBeInstanceOf(TelemetryParseError);
    expect(fromBytes.message).toBe(message);
    expect(thrown(() => parseReplayInput([{ text: Buffer.from(text, 'utf8'), file: 'x.json' }])).message).toBe(message);
  });

  it('an invalid UTF-8 byte between objects is U+FFFD, as in the file read as UTF-8 text', () => {
    const bytes = Buffer.concat([Buffer.from('{"resourceSpans": []}\n', 'utf8'), Buffer.from([0xff]), Buffer.from('\n', 'utf8')]);
    const message = 'x.json:2:1: unexpected character U+FFFD between JSON objects';
    expect(thrown(() => parseTelemetryText(bytes.toString('utf8'), 'x.json')).message).toBe(message);
    expect(thrown(() => parseTelemetryText(bytes, 'x.json')).message).toBe(message);
  });

  it('a byte order mark at the start is skipped, in text and in bytes', () => {
    const path = captures().find((f) => f.name.endsWith('acp-enforce.outfile.json'))?.path as string;
    const text = readFileSync(path, 'utf8');
    const expected = parseTelemetryText(text, path);
    expect(expected.spans.length).toBeGreaterThan(0);
    expect(parseTelemetryText(`\ufeff${text}`, path)).toEqual(expected);
    expect(parseTelemetryText(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]), path)).toEqual(expected);
  });

  it('invalid UTF-8 inside a value decodes to U+FFFD, as in the file read as UTF-8 text', () => {
    const line = (value: string) =>
      `{"resourceLogs":[{"scopeLogs":[{"scope":{"name":"s"},"logRecords":[{"timeUnixNano":"1000000000","attributes":[{"key":"k","value":{"stringValue":"${value}"}}]}]}]}]}\n`;
    const [head, tail] = line('\u0000').split('\u0000') as [string, string];
    const bytes = Buffer.concat([Buffer.from(head, 'utf8'), Buffer.from([0x61, 0xc3, 0x28, 0x62]), Buffer.from(tail, 'utf8')]); // C3 28: a lead byte without its continuation
    const fromBytes = parseTelemetryText(bytes, 'x.jsonl');
    expect(fromBytes).toEqual(parseTelemetryText(bytes.toString('utf8'), 'x.jsonl'));
    expect(fromBytes.logs[0]?.attributes.k).toBe('a\ufffd(b');
  });
});

describe('the Resource of SDK objects (`resource._rawAttributes`)', () => {
  const log = (resource: unknown[][], prompt: string) =>
    JSON.stringify({ resource: { _rawAttributes: resource }, _hrTime: [1, 0], attributes: { 'event.name': 'qwen-code.api_request', prompt_id: prompt }, instrumentationScope: { name: 'qwen-code' } }, null, 2);
  const A = [['service.name', 'qwen-code'], ['service.version', '0.24.4'], ['host.arch', 'x64']];
  const B = [['service.name', 'qwen-code'], ['service.version', '0.25.0'], ['host.arch', 'x64']];

  it('objects with equal pairs share one frozen Resource; a change is read as written', () => {
    const text = [log(A, 'p1'), log(A, 'p2'), log(B, 'p3'), log(A, 'p4'), log([...A, ['__proto__', 'x']], 'p5')].join('\n');
    for (const contents of [text, Buffer.from(text, 'utf8')]) {
      const logs = parseTelemetryText(contents, 'r.json').logs;
      const r = logs.map((l) => l.resource);
      expect(r[1]).toBe(r[0]);
      expect(r[0]?.attributes).toEqual({ 'service.name': 'qwen-code', 'service.version': '0.24.4', 'host.arch': 'x64' });
      expect(Object.isFrozen(r[0]) && Object.isFrozen(r[0]?.attributes)).toBe(true);
      expect(r[2]).not.toBe(r[1]);
      expect(r[2]?.attributes['service.version']).toBe('0.25.0');
      expect(r[3]?.attributes['service.version']).toBe('0.24.4');
      // a pair named __proto__ is an own attribute, not the object's prototype
      expect(Object.getPrototypeOf(r[4]?.attributes)).toBe(Object.prototype);
      expect(Object.keys(r[4]?.attributes ?? {})).toEqual(['service.name', 'service.version', 'host.arch', '__proto__']);
    }
  });
});
