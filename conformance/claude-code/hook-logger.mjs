// @ts-check
/* global process, Buffer */
/**
 * A Claude Code command hook that records its input: it reads the hook's JSON from stdin and
 * appends it as one line to the file named by its first argument, then exits 0 with no output
 * (no decision). The conformance driver registers it for every hook event to capture the exact
 * hook inputs the CLI sends; the file stays in the throwaway run directory unless copied.
 */
import { appendFileSync } from 'node:fs';

const file = process.argv[2];
/** @type {Buffer[]} */
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  if (file) {
    const text = Buffer.concat(chunks).toString('utf8').trim();
    appendFileSync(file, `${JSON.stringify({ receivedMillis: Date.now(), input: safeParse(text) })}\n`);
  }
  process.exit(0);
});

/** @param {string} text */
function safeParse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return { unparsed: text };
  }
}
