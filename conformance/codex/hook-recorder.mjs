// @ts-check
/* global process, Buffer */
/**
 * A Codex command hook that records its input: it reads the hook's JSON from stdin and appends one
 * line `{ receivedMillis, transcriptLines, input }` to the file named by its first argument, where
 * `transcriptLines` is how many complete lines the session transcript (`transcript_path`) held
 * when the hook ran (what a hook could read at that moment). It exits 0 with no output.
 */
import { appendFileSync, readFileSync } from 'node:fs';

const file = process.argv[2];
/** @type {Buffer[]} */
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  if (file) {
    /** @type {any} */
    let input;
    try {
      input = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      input = { unparsed: true };
    }
    let transcriptLines = 0;
    try {
      const text = readFileSync(String(input?.transcript_path), 'utf8');
      transcriptLines = text.split('\n').length - 1;
    } catch {
      // no transcript yet
    }
    appendFileSync(file, `${JSON.stringify({ receivedMillis: Date.now(), transcriptLines, input })}\n`);
  }
  process.exit(0);
});
