// @ts-check
/* global process, Buffer */
/**
 * A command hook that records its input (Claude Code's and gemini-cli's conformance runs): it reads
 * the hook's JSON from stdin and appends it as one line to the file named by its first argument,
 * then exits 0 with no output (no decision). The conformance driver registers it for every hook
 * event to capture the exact hook inputs the CLI sends; the file stays in the throwaway run
 * directory unless copied.
 *
 * With `--transcript-turns` (gemini-cli), on the events the guard hook reads gemini-cli's session
 * transcript at (BeforeAgent, BeforeModel, AfterAgent) the line also keeps what the transcript held
 * then, reduced to what the guard reads: each model turn with calls, as
 * `{ id, type, toolCalls: [{ name, status }] }` (`transcript`). The fixture replay
 * (`test/gemini-cli-fixtures.test.ts`) hands the guard hook that transcript.
 */
import { appendFileSync, readFileSync } from 'node:fs';

const TRANSCRIPT_EVENTS = new Set(['BeforeAgent', 'BeforeModel', 'AfterAgent']);
const file = process.argv[2];
const withTranscript = process.argv[3] === '--transcript-turns';
/** @type {Buffer[]} */
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  if (file) {
    const text = Buffer.concat(chunks).toString('utf8').trim();
    const input = safeParse(text);
    /** @type {Record<string, unknown>} */
    const line = { receivedMillis: Date.now(), input };
    if (withTranscript && TRANSCRIPT_EVENTS.has(input?.hook_event_name)) line.transcript = transcriptTurns(input?.transcript_path);
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  }
  process.exit(0);
});

/**
 * @param {unknown} path
 * @returns {unknown[] | null} the model turns with calls, reduced; `null` when unreadable
 */
function transcriptTurns(path) {
  if (typeof path !== 'string' || path === '') return null;
  let text;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  /** @type {unknown[]} */
  const turns = [];
  for (const l of text.split('\n')) {
    if (!l.includes('"toolCalls"')) continue;
    const r = safeParse(l);
    if (r?.type !== 'gemini' || !Array.isArray(r.toolCalls)) continue;
    turns.push({ id: r.id, type: 'gemini', toolCalls: r.toolCalls.map((/** @type {any} */ c) => ({ name: c?.name, status: c?.status })) });
  }
  return turns;
}

/** @param {string} text */
function safeParse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return { unparsed: text };
  }
}
