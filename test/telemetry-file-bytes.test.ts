/**
 * Reading a telemetry file from its UTF-8 bytes (what the CLI does) against reading its text:
 * the same records from every real capture, and the same errors at the same positions, counted in
 * characters of the decoded text, when characters before the error take more than one byte.
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
    { desc: 'a two-byte character between objects', text: '{"resourceSpans": []}\n  é\n', message: 'x.json:2:3: unexpected character "é" between JSON objects' },
    { desc: 'a four-byte character between objects', text: '{"resourceSpans": []}   😀\n', message: 'x.json:1:25: unexpected character "\\ud83d" between JSON objects' },
    { desc: 'invalid JSON after three-byte characters on the same line', text: '{"x": "日本"}{"resourceSpans": [,]}\n', message: 'x.json:1:12: invalid JSON in the object that starts here' },
    { desc: 'a truncated object on a line after a two-byte character', text: '{"x": "ü"}\n  {"resourceSpans": [\n', message: 'x.json:2:3: truncated JSON object' },
    { desc: 'invalid JSON in a pretty object holding a two-byte character', text: '{"resourceSpans": []}\n{\n  "name": "ñ",\n  "attributes": {"a": tru}\n}\n', message: 'x.json:2:1: invalid JSON in the object that starts here' },
    { desc: 'a byte order mark (not skipped, in text or bytes)', text: '\ufeff{"resourceSpans": []}\n', message: 'x.json:1:1: unexpected character "\ufeff" between JSON objects' },
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
    const message = 'x.json:2:1: unexpected character "\ufffd" between JSON objects';
    expect(thrown(() => parseTelemetryText(bytes.toString('utf8'), 'x.json')).message).toBe(message);
    expect(thrown(() => parseTelemetryText(bytes, 'x.json')).message).toBe(message);
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
