// @ts-check
/* global console */
// Which scenario files a conformance runner runs: all of a folder's `*.json`, or the named ones.
import { readdirSync } from 'node:fs';

/**
 * The scenario files of `dir` to run, sorted; `undefined` (after printing why) when a name is unknown.
 * @param {string} dir
 * @param {readonly string[]} only Scenario names (file names without `.json`); empty: all.
 * @returns {string[] | undefined}
 */
export function selectScenarios(dir, only) {
  const all = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  const unknown = only.filter((n) => !all.includes(`${n}.json`));
  if (unknown.length > 0) {
    console.error(`unknown scenario(s): ${unknown.join(', ')}`);
    return undefined;
  }
  return all.filter((f) => only.length === 0 || only.includes(f.replace(/\.json$/, '')));
}
