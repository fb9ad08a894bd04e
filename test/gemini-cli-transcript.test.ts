import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { latestListedTurn, readGeminiCliTranscript, transcriptTurnDigest } from '../src/hooks/gemini-cli/transcript.js';

/**
 * Reading gemini-cli 0.61.0's session transcript for the latest model turn with calls. The record
 * lines are the shapes the real CLI wrote in the conformance run `validation-errors-shadow`
 * (paths and texts replaced): a turn appended without, then with, its `toolCalls`; a call refused
 * for invalid arguments and one for an unknown tool, both `error`.
 */
const HEADER = { sessionId: 's', projectHash: 'f'.repeat(64), startTime: '2026-12-02T08:04:00.000Z', lastUpdated: '2026-12-02T08:04:00.000Z', kind: 'main' };
const SET = { $set: { lastUpdated: '2026-12-02T08:04:43.428Z' } };
const turn = (id: string) => ({ id, timestamp: '2026-12-02T08:04:43.428Z', type: 'gemini', content: '', thoughts: [], tokens: { input: 10, output: 5, cached: 0, thoughts: 0, tool: 0, total: 15 }, model: 'gemini-2.5-flash' });
const call = (id: string, name: string, status: string, error = 'File not found: /tmp/secret/x') => ({
  id,
  name,
  args: { file_path: '/tmp/secret/x' },
  result: [{ functionResponse: { id, name, response: { error } } }],
  status,
  timestamp: '2026-12-02T08:04:43.429Z',
  resultDisplay: error,
  description: '',
  displayName: name,
  renderOutputAsMarkdown: false,
});
const userResponses = (id: string) => ({ id, timestamp: '2026-12-02T08:04:43.430Z', type: 'user', content: [{ functionResponse: { id: 'x', name: 'read_file', response: { error: 'toolCalls in a text' } } }] });
const lines = (...records: object[]) => records.map((r) => JSON.stringify(r));

const T1 = '858a85e1-0000-4000-8000-000000000001';
const T2 = '42e3178c-6878-4667-a3f5-651aa8ae3649';
const REAL = lines(
  HEADER,
  SET,
  turn(T1),
  SET,
  { ...turn(T1), toolCalls: [call('read_file__call_p1r3_0', 'read_file', 'error', "params must have required property 'file_path'"), call('read_file__call_p1r3_1', 'read_file', 'error')] },
  userResponses('e913dbff'),
  SET,
  turn(T2),
  SET,
  { ...turn(T2), toolCalls: [call('read_fil__call_p1r4_0', 'read_fil', 'error', 'Tool "read_fil" not found.')] },
  userResponses('c4dfbde7'),
  SET,
);

describe('latestListedTurn', () => {
  const rows: { name: string; lines: string[]; expected: unknown }[] = [
    { name: 'the latest turn with calls (an unknown tool, refused)', lines: REAL, expected: { kind: 'listed', turn: transcriptTurnDigest(T2), calls: [{ toolName: 'read_fil', status: 'error' }] } },
    {
      name: 'the turn before it (invalid arguments beside a failure)',
      lines: REAL.slice(0, 7),
      expected: { kind: 'listed', turn: transcriptTurnDigest(T1), calls: [{ toolName: 'read_file', status: 'error' }, { toolName: 'read_file', status: 'error' }] },
    },
    { name: 'a turn not yet listed with its calls: the earlier one', lines: REAL.slice(0, 9), expected: { kind: 'listed', turn: transcriptTurnDigest(T1), calls: expect.any(Array) } },
    { name: 'no turn with calls yet', lines: REAL.slice(0, 4), expected: undefined },
    {
      name: 'statuses: success, cancelled, and any other as other',
      lines: lines({ ...turn(T1), toolCalls: [call('a', 'ls', 'success'), call('b', 'write_file', 'cancelled'), call('c', 'x', 'scheduled'), { ...call('d', 'y', 'error'), status: 3 }] }),
      expected: {
        kind: 'listed',
        turn: transcriptTurnDigest(T1),
        calls: [
          { toolName: 'ls', status: 'success' },
          { toolName: 'write_file', status: 'cancelled' },
          { toolName: 'x', status: 'other' },
          { toolName: 'y', status: 'other' },
        ],
      },
    },
    { name: 'a call without a name: malformed', lines: lines({ ...turn(T1), toolCalls: [{ ...call('a', 'ls', 'success'), name: 7 }] }), expected: { kind: 'unreadable', reason: 'malformed' } },
    { name: 'a turn without an id: malformed', lines: lines({ ...turn(''), toolCalls: [] }), expected: { kind: 'unreadable', reason: 'malformed' } },
    { name: 'a cut line holding toolCalls: malformed', lines: [(REAL[4] ?? '').slice(0, (REAL[4] ?? '').indexOf('"toolCalls"') + 40)], expected: { kind: 'unreadable', reason: 'malformed' } },
    { name: 'a user record whose text says toolCalls is no turn', lines: lines(userResponses('u'), { type: 'user', toolCalls: [] }), expected: undefined },
  ];
  it.each(rows)('$name', ({ lines: l, expected }) => {
    expect(latestListedTurn(l)).toEqual(expected);
  });
});

describe('readGeminiCliTranscript', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rtfg-gemini-transcript-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('reads the real shape, and ignores a line still being written', async () => {
    const path = file('real.jsonl', `${REAL.join('\n')}\n${JSON.stringify({ ...turn('later'), toolCalls: [] }).slice(0, 40)}`);
    expect(await readGeminiCliTranscript(path)).toEqual({ kind: 'listed', turn: transcriptTurnDigest(T2), calls: [{ toolName: 'read_fil', status: 'error' }] });
  });

  it('finds a turn far from the end, past large records, window by window; gives up past its limit', async () => {
    const big = JSON.stringify({ id: 'u', type: 'user', content: [{ text: 'x'.repeat(600_000) }] });
    const path = file('big.jsonl', `${REAL.join('\n')}\n${big}\n${big}\n`);
    expect(await readGeminiCliTranscript(path)).toMatchObject({ kind: 'listed', turn: transcriptTurnDigest(T2) });
    expect(await readGeminiCliTranscript(path, 1_000_000)).toEqual({ kind: 'unreadable', reason: 'too_large' });
  });

  it('no turn with calls: listed, no turn', async () => {
    expect(await readGeminiCliTranscript(file('empty.jsonl', `${REAL.slice(0, 4).join('\n')}\n`))).toEqual({ kind: 'listed', turn: undefined, calls: [] });
  });

  const unreadable: { name: string; path: () => unknown; reason: string }[] = [
    { name: 'no transcript_path', path: () => undefined, reason: 'no_record' },
    { name: 'an empty transcript_path', path: () => '', reason: 'no_record' },
    { name: 'a missing file', path: () => join(dir, 'missing.jsonl'), reason: 'no_record' },
    {
      name: 'a directory',
      path: () => {
        mkdirSync(join(dir, 'd.jsonl'), { recursive: true });
        return join(dir, 'd.jsonl');
      },
      reason: 'not_a_file',
    },
    {
      name: 'a FIFO (without hanging)',
      path: () => {
        execFileSync('mkfifo', [join(dir, 'f.jsonl')]);
        return join(dir, 'f.jsonl');
      },
      reason: 'not_a_file',
    },
  ];
  it.each(unreadable)('$name: unreadable ($reason)', async ({ path, reason }) => {
    expect(await readGeminiCliTranscript(path())).toEqual({ kind: 'unreadable', reason });
  });
});
