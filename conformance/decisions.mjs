// @ts-check
/* global process */
import { spawnSync } from 'node:child_process';

/**
 * Guard decisions as the conformance harnesses compare them: `replay --format json` lines (or a
 * hook's decisions file) against a scenario's expected decisions, and the result table. Shared by
 * the per-agent `run-all.mjs` drivers that key prompts by their own rule.
 */

/** The fields compared, besides `prompt` and `batch`. */
export const COMPARED = /** @type {const} */ ([
  'mode',
  'decision',
  'phaseBefore',
  'phaseAfter',
  'failureCountBucket',
  'batchCountBucket',
  'candidateOrdinal',
  'resetReason',
]);

/**
 * @typedef {Record<string, any>} Decision
 */

/**
 * A compact rendering: `b1:tracked(1-2,1)#1`, `b4:reset:success(3-4,2)#1`, prefixed `p2/` for prompt 2.
 * @param {Decision} d
 */
export function compact(d) {
  const head = d.decision === 'reset' ? `reset:${d.resetReason}` : d.decision;
  return `${(d.prompt ?? 1) > 1 ? `p${d.prompt}/` : ''}b${d.batch}:${head}(${d.failureCountBucket},${d.batchCountBucket})#${d.candidateOrdinal}`;
}

/**
 * Parses decision JSON lines: the failure guard's decisions only (not the identical-call breaker's
 * lines, not unjudged batches), each with its 1-based `prompt` from `promptOf(promptId)`.
 * @param {string} text
 * @param {(promptId: string) => number} promptOf 0 for an unknown prompt id (a problem)
 * @param {string[]} problems
 * @param {string} label
 * @returns {Decision[]}
 */
export function parseDecisions(text, promptOf, problems, label) {
  /** @type {Decision[]} */
  const out = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const d = JSON.parse(line);
      if (d.guard !== 'repeated_tool_failure' || !('decision' in d)) continue;
      const prompt = promptOf(String(d.promptId));
      if (prompt === 0) problems.push(`${label}: decision on an unknown prompt id ${d.promptId}`);
      out.push({ ...d, prompt });
    } catch {
      problems.push(`${label}: a non-JSON line: ${line.slice(0, 120)}`);
    }
  }
  return out;
}

/**
 * Compares decisions with the expected ones, position by position (`prompt` defaults to 1).
 * @param {string} label
 * @param {Decision[]} expected
 * @param {Decision[]} actual
 * @param {string} mode
 * @returns {string[]} one line per difference
 */
export function compareDecisions(label, expected, actual, mode) {
  /** @type {string[]} */
  const diffs = [];
  for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
    /** @type {Decision | undefined} */
    const e = expected[i] ? { mode, prompt: 1, ...expected[i] } : undefined;
    const a = actual[i];
    if (!e || !a) {
      diffs.push(`${label} #${i + 1}: expected ${e ? compact(e) : '(nothing)'}, got ${a ? compact(a) : '(nothing)'}`);
      continue;
    }
    const bad = [...COMPARED, 'prompt', 'batch'].filter((k) => k in e || k in a).filter((k) => String(e[k]) !== String(a[k]));
    if (bad.length > 0) diffs.push(`${label} #${i + 1}: expected ${compact(e)} ${e.mode}, got ${compact(a)} ${a.mode} (${bad.join(', ')})`);
  }
  return diffs;
}

/**
 * Table lines, each column padded to its widest cell.
 * @param {string[][]} rows the first row is the header
 * @returns {string[]}
 */
export function tableLines(rows) {
  const widths = rows[0]?.map((_, c) => Math.max(...rows.map((row) => (row[c] ?? '').length))) ?? [];
  return rows.map((row) => row.map((cell, c) => cell.padEnd(widths[c] ?? 0)).join(' | ').trimEnd());
}

/**
 * Runs our `replay --format json` (no `--profile`: auto-detection) on a capture, bounded in time.
 * @param {string} cli our built CLI
 * @param {string} file the capture
 * @param {string} mode
 * @param {number} timeoutMillis
 */
export function runReplay(cli, file, mode, timeoutMillis) {
  const r = spawnSync(process.execPath, [cli, 'replay', '--mode', mode, '--format', 'json', file], {
    encoding: 'utf8',
    timeout: timeoutMillis,
    killSignal: 'SIGKILL',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { stdout: r.stdout ?? '', stderr: r.stderr ?? '', status: r.status, error: r.error };
}
