// @ts-check
/* global process, console, setTimeout */
/**
 * The genai conformance run: drives the real pydantic-ai and Strands Agents loops offline (their
 * own function model / a scripted model provider, no network), in both semantic-convention
 * generations each, with their OTLP export going to a loopback sink; replays every capture with
 * our `replay` (profile told from the content) and checks the decisions the design requires
 * (expected.json). Then runs one scenario of each framework live against our `serve` (`--profile
 * auto`, the per-trace router) and checks the same decisions.
 *
 *   npm run conformance:genai:install && npm run test:conformance:genai
 *   node conformance/genai/run-all.mjs [--keep DIR] [framework-id ...]
 *
 * Prints a table and `N passed, M failed`. Exit 0 when every check passed, 1 otherwise (also when
 * the virtual environment or dist/ is missing), 2 on bad usage.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FRAMEWORKS, here, recordScenario, runScenario, venvReady } from './frameworks.mjs';

const repoRoot = resolve(here, '..', '..');
const dist = join(repoRoot, 'dist');
/** No new check starts after this much time (a normal run takes 3-6 minutes on 2 loaded cores). */
const START_BUDGET_MILLIS = 600_000;

/** @typedef {{ batches: number, calls?: number[], decisions: string[] }} ExpectedPrompt */
/** @type {Record<string, { prompts: ExpectedPrompt[], untyped?: { prompts: ExpectedPrompt[] } }>} */
const expected = JSON.parse(readFileSync(join(here, 'expected.json'), 'utf8'));

/**
 * Decisions per prompt, in the order prompts first decided, in the shape of expected.json.
 * @param {readonly any[]} decisions BatchDecision objects
 * @returns {ExpectedPrompt[]}
 */
function byPrompt(decisions) {
  /** @type {Map<string, any[]>} */
  const prompts = new Map();
  for (const d of decisions) prompts.set(d.promptId, [...(prompts.get(d.promptId) ?? []), d]);
  return [...prompts.values()].map((ds) => ({
    batches: ds.length,
    calls: ds.map((d) => d.receipt.observations.length),
    decisions: ds
      .filter((d) => d.outcome.decision !== 'none')
      .map((d) => `${d.batch}:${d.outcome.decision}${d.outcome.resetReason === undefined ? '' : `/${d.outcome.resetReason}`}`),
  }));
}

/**
 * The decisions the design requires of `framework` in `scenario`: the scenario's `untyped` variant
 * when the framework's failures carry no type, with one more successful batch per run when the
 * framework answers through a tool.
 * @param {import('./frameworks.mjs').Framework} framework
 * @param {string} scenario
 * @returns {ExpectedPrompt[] | undefined}
 */
function wanted(framework, scenario) {
  const entry = expected[scenario];
  const prompts = (framework.failures === 'untyped' ? entry?.untyped?.prompts : undefined) ?? entry?.prompts;
  if (prompts === undefined || framework.finalBatch !== true) return prompts;
  return prompts.map((p) => ({ batches: p.batches + 1, calls: p.calls === undefined ? undefined : [...p.calls, 1], decisions: p.decisions }));
}

/**
 * Problems of `got` against the scenario's expected prompts (empty when it conforms).
 * @param {string} scenario
 * @param {ExpectedPrompt[]} got
 * @returns {string[]}
 */
function problems(framework, scenario, got) {
  const want = wanted(framework, scenario);
  if (want === undefined) return [`no expected decisions for ${scenario}`];
  const out = [];
  if (got.length !== want.length) out.push(`prompts: got ${got.length}, want ${want.length}`);
  want.forEach((w, i) => {
    const g = got[i];
    if (g === undefined) return;
    if (g.batches !== w.batches) out.push(`prompt ${i + 1}: batches ${g.batches}, want ${w.batches}`);
    if (w.calls !== undefined && JSON.stringify(g.calls) !== JSON.stringify(w.calls)) out.push(`prompt ${i + 1}: calls ${JSON.stringify(g.calls)}, want ${JSON.stringify(w.calls)}`);
    if (JSON.stringify(g.decisions) !== JSON.stringify(w.decisions)) {
      out.push(`prompt ${i + 1}: decisions ${JSON.stringify(g.decisions)}, want ${JSON.stringify(w.decisions)}`);
    }
  });
  return out;
}

const args = process.argv.slice(2);
let keep;
const only = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--keep') keep = args[++i];
  else if (FRAMEWORKS.some((f) => f.id === args[i])) only.push(args[i]);
  else {
    console.error(`usage: run-all.mjs [--keep DIR] [${FRAMEWORKS.map((f) => f.id).join('|')} ...]`);
    process.exit(2);
  }
}
if (!venvReady()) {
  console.error('genai conformance: conformance/genai/.venv is missing; run `npm run conformance:genai:install` first');
  process.exit(1);
}
if (!existsSync(join(dist, 'replay.js')) || !existsSync(join(dist, 'serve.js'))) {
  console.error('genai conformance: dist/ is missing; run `npm run build` first');
  process.exit(1);
}
const replayApi = await import(pathToFileURL(join(dist, 'replay.js')).href);
const serveApi = await import(pathToFileURL(join(dist, 'serve.js')).href);

const outDir = keep ?? mkdtempSync(join(tmpdir(), 'rtfg-genai-'));
mkdirSync(outDir, { recursive: true });
const started = Date.now();
/** @type {Array<{ check: string, ok: boolean, detail: string }>} */
const rows = [];

for (const framework of FRAMEWORKS) {
  if (only.length > 0 && !only.includes(framework.id)) continue;
  for (const generation of framework.generations) {
    for (const scenario of framework.scenarios) {
      const check = `${framework.id} ${framework.version} ${generation.id} ${scenario} (replay)`;
      if (Date.now() - started > START_BUDGET_MILLIS) {
        rows.push({ check, ok: false, detail: 'not started: time budget used up' });
        continue;
      }
      const file = join(outDir, `${framework.id}.${scenario}.${generation.id}.otlp.jsonl`);
      const run = await recordScenario(framework, generation, scenario, file);
      if (run.code !== 0) {
        rows.push({ check, ok: false, detail: `framework run exited ${run.code}: ${run.stderr.trim().split('\n').slice(-3).join(' | ')}` });
        continue;
      }
      const records = replayApi.parseTelemetryText(readFileSync(file, 'utf8'), file, replayApi.emptyRecordBatch());
      const result = await replayApi.replayRecords(records);
      const issues = problems(framework, scenario, byPrompt(result.decisions));
      const profile = framework.profile ?? 'genai';
      if (result.profile !== profile) issues.push(`profile told from the capture: ${result.profile}, want ${profile}`);
      const invariants = replayApi.auditInvariants(result.decisions, result.emitted, replayApi.inputIdentifiers(records), result.namespace);
      for (const inv of invariants) if (!inv.held) issues.push(`invariant violated: ${inv.id}`);
      const got = byPrompt(result.decisions);
      rows.push({
        check,
        ok: issues.length === 0,
        detail: issues.length === 0 ? got.map((p) => `${p.batches} batches: ${p.decisions.join(' ') || '-'}`).join('; ') : issues.join('; '),
      });
    }
  }
  // Live: the framework exports straight to our serve (profile auto), no file in between.
  const generation = framework.generations.at(-1);
  const scenario = 'parallel-batch';
  const check = `${framework.id} ${framework.version} ${generation?.id} ${scenario} (serve --profile auto, live OTLP)`;
  if (generation === undefined || Date.now() - started > START_BUDGET_MILLIS) {
    rows.push({ check, ok: false, detail: 'not started: time budget used up' });
    continue;
  }
  /** @type {string[]} */
  const printed = [];
  const server = await serveApi.startGuardServer({ host: '127.0.0.1', port: 0, profile: 'auto', graceMillis: 500, print: (/** @type {string} */ l) => printed.push(l) });
  const run = await runScenario(framework, generation, scenario, server.url);
  await new Promise((r) => setTimeout(r, 1_000));
  await server.close();
  const issues = run.code === 0 ? problems(framework, scenario, byPrompt(server.decisions)) : [`framework run exited ${run.code}`];
  if (!printed.some((l) => l.includes('repeated_tool_failure_guard'))) issues.push('serve printed no guard telemetry');
  rows.push({
    check,
    ok: issues.length === 0,
    detail: issues.length === 0 ? byPrompt(server.decisions).map((p) => `${p.batches} batches: ${p.decisions.join(' ')}`).join('; ') : issues.join('; '),
  });
}

if (keep === undefined) rmSync(outDir, { recursive: true, force: true });
const width = Math.max(...rows.map((r) => r.check.length));
for (const r of rows) console.log(`${r.ok ? 'PASS' : 'FAIL'}  ${r.check.padEnd(width)}  ${r.detail}`);
const passed = rows.filter((r) => r.ok).length;
console.log(`${passed} passed, ${rows.length - passed} failed`);
process.exit(rows.length > 0 && passed === rows.length ? 0 : 1);
