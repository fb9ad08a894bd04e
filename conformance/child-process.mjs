// @ts-check
/* global process, setTimeout, clearTimeout */
// Ending the agent CLIs the conformance runs start, shared by the qwen-code and Claude Code drivers.
import { existsSync, statSync } from 'node:fs';

/** How long a CLI gets after SIGTERM before SIGKILL, in milliseconds. */
const TERM_GRACE_MILLIS = 3_000;

/**
 * Waits for a child to exit, or gives up after `millis`.
 * @param {import('node:child_process').ChildProcess} child
 * @param {number} millis
 * @returns {Promise<boolean>} Whether it exited.
 */
export function waitForExit(child, millis) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((res) => {
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      res(false);
    }, millis);
    const onExit = () => {
      clearTimeout(timer);
      res(true);
    };
    child.once('exit', onExit);
  });
}

/**
 * Signals a CLI's process group. The CLIs re-spawn themselves (qwen-code's `cli-entry.js` starts
 * `node --expose-gc cli.js`), so signalling only the wrapper would orphan the CLI; the children are
 * started detached, so a child's pid is also its process group id.
 * @param {number} pid
 * @param {NodeJS.Signals} signal
 */
export function signalGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/**
 * Ends a CLI: waits for a voluntary exit, then SIGTERM, then SIGKILL, all by its process group.
 * @param {import('node:child_process').ChildProcess} child
 * @param {number} graceMillis
 * @returns {Promise<boolean>} Whether a signal was needed.
 */
export async function endChild(child, graceMillis) {
  if (await waitForExit(child, graceMillis)) return false;
  if (child.pid === undefined) return true;
  signalGroup(child.pid, 'SIGTERM');
  if (!(await waitForExit(child, TERM_GRACE_MILLIS))) {
    signalGroup(child.pid, 'SIGKILL');
    await waitForExit(child, TERM_GRACE_MILLIS);
  }
  return true;
}

/**
 * Waits until a file has stopped growing for `quietMillis` (at most `maxMillis`).
 * @param {string} file
 * @param {number} quietMillis
 * @param {number} maxMillis
 */
export async function waitForQuietFile(file, quietMillis, maxMillis) {
  const end = Date.now() + maxMillis;
  let last = -1;
  let stableSince = Date.now();
  while (Date.now() < end) {
    const size = existsSync(file) ? statSync(file).size : -1;
    if (size !== last) {
      last = size;
      stableSince = Date.now();
    } else if (Date.now() - stableSince >= quietMillis) {
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
