// @ts-check
/* global process, console */
/**
 * Runs the AI SDK conformance scenarios against the real `ai` package and its mock model
 * (`ai/test` `MockLanguageModelV3`), with `repeated-tool-failure-guard/ai-sdk` spread into each
 * call. Checks the decisions the design gives (scenarios.mjs), and their effects on the wire the
 * model sees: the reminder (or the breaker's warning) is in no model call before the expected one
 * and at most once in any call; in enforce the loop ends after the expected step, with that step's
 * results kept, and no further model call.
 *
 * Each run also exports the SDK's own telemetry to a second guard, in shadow, registered as a
 * span processor: AI SDK 6's `ai.*` spans (`experimental_telemetry`, profile `ai-sdk`) and AI SDK
 * 7's GenAI spans through `@ai-sdk/otel` (`registerTelemetry(new OpenTelemetry({ tracer }))`,
 * profile `genai`, the `step N` span as the batch). Its decisions must be the scenario's, each
 * action read as its shadow twin (`warned` → `would_warn`, `stopped` → `would_stop`, `aborted`
 * → `would_abort`): the same batches, judged from telemetry alone.
 *
 * Usage: node conformance/ai-sdk/run-all.mjs --sdk v6|v7 [scenario-name ...]
 * The SDK comes from conformance/ai-sdk/<sdk>/node_modules (npm run conformance:ai-sdk:install).
 * Exit code: 0 when every selected scenario passed; 1 when one failed or the SDK is missing.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createRequire } from 'node:module';
import { SCENARIOS } from './scenarios.mjs';
import { runSelected } from '../scenario-loop.mjs';
import { compact } from '../decisions.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const { values, positionals } = parseArgs({ options: { sdk: { type: 'string', default: 'v6' } }, allowPositionals: true });
const sdkDir = join(here, String(values.sdk), 'node_modules');
if (!existsSync(join(sdkDir, 'ai'))) {
  console.error(`ai-sdk conformance: ${join(sdkDir, 'ai')} is missing; run npm run conformance:ai-sdk:install`);
  process.exit(1);
}
const load = (/** @type {string} */ spec) => import(pathToFileURL(join(sdkDir, spec)).href);
const ai = await load('ai/dist/index.mjs').catch(() => load('ai/dist/index.js'));
const aiTest = await load('ai/dist/test/index.mjs').catch(() => load('ai/dist/test/index.js'));
const { z } = await load('zod/index.js');
const { createAiSdkGuard } = await import(pathToFileURL(join(root, 'dist', 'ai-sdk.js')).href);
const { createRepeatedToolFailureGuard, REPEATED_TOOL_FAILURE_REMINDER, REPETITION_WARNING_TEXT } = await import(pathToFileURL(join(root, 'dist', 'index.js')).href);
const { TracerProvider } = await import('@opentelemetry/sdk-trace');
const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
// Parent spans reach their children through the active context, as under NodeSDK: a context
// manager registered through the SDK's own copy of the API.
const sdkApi = await import(pathToFileURL(createRequire(join(sdkDir, 'ai', 'package.json')).resolve('@opentelemetry/api')).href);
sdkApi.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const aiVersion = JSON.parse(await readFile(join(sdkDir, 'ai', 'package.json'), 'utf8')).version;
const v7 = Number(aiVersion.split('.')[0]) >= 7;

/** The telemetry side: one tracer whose spans go to the current scenario's shadow guard. */
const telemetryGuard = { current: /** @type {any} */ (undefined) };
const provider = new TracerProvider({
  spanProcessors: [
    {
      onStart: (/** @type {any} */ span, /** @type {any} */ ctx) => telemetryGuard.current?.spanProcessor.onStart(span, ctx),
      onEnd: (/** @type {any} */ span) => telemetryGuard.current?.spanProcessor.onEnd(span),
      forceFlush: async () => {},
      shutdown: async () => {},
    },
  ],
});
const tracer = provider.getTracer('conformance');
if (v7) {
  const { OpenTelemetry } = await load('@ai-sdk/otel/dist/index.js');
  ai.registerTelemetry(new OpenTelemetry({ tracer }));
}
/** Settings turning the SDK's telemetry on where it is per call (AI SDK 6). */
const TELEMETRY = v7 ? {} : { experimental_telemetry: { isEnabled: true, tracer } };
const SHADOW_TWIN = { warned: 'would_warn', stopped: 'would_stop', aborted: 'would_abort' };
const shadowTwin = (/** @type {string} */ line) => line.replace(/:(warned|stopped|aborted)\b/, (_m, d) => `:${SHADOW_TWIN[/** @type {'warned'} */ (d)]}`);

/** The tools, over a scratch directory. */
function makeTools(/** @type {string} */ dir) {
  return {
    read_file: ai.tool({
      description: 'Read a file',
      inputSchema: z.object({ path: z.string() }),
      execute: async (/** @type {{ path: string }} */ { path }) => readFile(join(dir, path), 'utf8'),
    }),
    write_file: ai.tool({
      description: 'Write a file',
      inputSchema: z.object({ path: z.string() }),
      execute: async (/** @type {{ path: string }} */ { path }) => {
        await writeFile(join(dir, path), 'x');
        return 'written';
      },
    }),
    list_dir: ai.tool({ description: 'List the directory', inputSchema: z.object({}), execute: async () => ['README.md', 'dir'] }),
    status: ai.tool({
      description: 'Context status',
      inputSchema: z.object({ scope: z.string(), view: z.string() }),
      execute: async () => ({ messages: Math.floor(Math.random() * 10) + 20 }),
    }),
  };
}

const USAGE = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

/** A mock model that answers round after round, then with text; records every prompt it gets. */
function makeModel(/** @type {Array<Array<{ name: string, args: unknown }>>} */ rounds, /** @type {string} */ tag) {
  let n = 0;
  /** @param {number} i */
  const content = (i) =>
    i < rounds.length
      ? rounds[i].map((c, k) => ({ type: 'tool-call', toolCallId: `${tag}-${i + 1}-${k + 1}`, toolName: c.name, input: JSON.stringify(c.args) }))
      : [{ type: 'text', text: 'done' }];
  const finish = (/** @type {number} */ i) => ({ unified: i < rounds.length ? 'tool-calls' : 'stop', raw: undefined });
  return new aiTest.MockLanguageModelV3({
    doGenerate: async () => {
      const i = n++;
      return { content: content(i), finishReason: finish(i), usage: USAGE, warnings: [] };
    },
    doStream: async () => {
      const i = n++;
      const parts = content(i).flatMap((p) =>
        p.type === 'text'
          ? [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: p.text }, { type: 'text-end', id: 't' }]
          : [p],
      );
      return {
        stream: aiTest.convertArrayToReadableStream([{ type: 'stream-start', warnings: [] }, ...parts, { type: 'finish', finishReason: finish(i), usage: USAGE }]),
      };
    },
  });
}

/** How many times `text` occurs in a model call's prompt. */
function occurrences(/** @type {unknown} */ prompt, /** @type {string} */ text) {
  return JSON.stringify(prompt).split(JSON.stringify(text).slice(1, -1)).length - 1;
}

/** A reduced batch in the decision-line shape, compacted as conformance/decisions.mjs does. */
function compactDecision(/** @type {any} */ d, /** @type {Map<string, number>} */ prompts) {
  const o = d.outcome;
  const bucket = (/** @type {number} */ n) => (n === 0 ? '0' : n <= 2 ? '1-2' : n <= 4 ? '3-4' : n <= 7 ? '5-7' : '8+');
  return compact({
    prompt: prompts.get(d.promptId) ?? 0,
    batch: d.batch,
    decision: o.decision,
    resetReason: o.resetReason,
    failureCountBucket: bucket(o.failureCount),
    batchCountBucket: o.batchCount >= 3 ? '3+' : String(o.batchCount),
    candidateOrdinal: o.candidateOrdinal,
  });
}

/** Run one scenario; returns the problems found (empty: passed). */
async function runScenario(/** @type {import('./scenarios.mjs').Scenario} */ s) {
  const dir = mkdtempSync(join(tmpdir(), 'rtfg-ai-sdk-'));
  writeFileSync(join(dir, 'README.md'), '# demo\n');
  mkdirSync(join(dir, 'dir'));
  const problems = [];
  const guard = createAiSdkGuard({ mode: s.mode });
  const watched = createRepeatedToolFailureGuard({ mode: 'shadow', profile: v7 ? 'genai' : 'ai-sdk' });
  telemetryGuard.current = watched;
  const listen = (/** @type {any} */ g) => {
    /** @type {string[]} */ const decisions = [];
    /** @type {string[]} */ const repetition = [];
    /** @type {Map<string, number>} */ const prompts = new Map();
    g.addListener({
      onDecision: (/** @type {any} */ d) => {
        if (!prompts.has(d.promptId)) prompts.set(d.promptId, prompts.size + 1);
        if (d.outcome.decision !== 'none') decisions.push(compactDecision(d, prompts));
      },
      onRepetitionDecision: (/** @type {any} */ r) => {
        if (r.outcome.decision !== 'none') repetition.push(`${r.outcome.runLength}:${r.outcome.decision}`);
      },
    });
    return { decisions, repetition };
  };
  const { decisions, repetition } = listen(guard);
  const seen = listen(watched);
  const tools = makeTools(dir);
  const api = s.api ?? 'generateText';
  const agentModel = { current: /** @type {any} */ (undefined) };
  const agent =
    api === 'agent'
      ? new ai.ToolLoopAgent({ model: { specificationVersion: 'v3', provider: 'p', modelId: 'm', supportedUrls: {}, doGenerate: (/** @type {any} */ o) => agentModel.current.doGenerate(o), doStream: (/** @type {any} */ o) => agentModel.current.doStream(o) }, tools, ...guard.settings({ stopWhen: ai.stepCountIs(40) }), ...TELEMETRY })
      : undefined;
  for (let p = 0; p < s.prompts.length; p++) {
    const model = makeModel(s.prompts[p], `p${p + 1}`);
    let steps;
    if (api === 'generateText') {
      const r = await ai.generateText({ model, tools, prompt: 'Read the notes', ...guard.settings({ stopWhen: ai.stepCountIs(40) }), ...TELEMETRY });
      steps = r.steps;
    } else if (api === 'streamText') {
      const r = ai.streamText({ model, tools, prompt: 'Read the notes', ...guard.settings({ stopWhen: ai.stepCountIs(40) }), ...TELEMETRY });
      await r.consumeStream();
      steps = await r.steps;
    } else {
      agentModel.current = model;
      const r = await /** @type {any} */ (agent).generate({ prompt: 'Read the notes' });
      steps = r.steps;
    }
    const calls = api === 'streamText' ? model.doStreamCalls : model.doGenerateCalls;
    if (calls.length !== s.modelCalls[p]) problems.push(`prompt ${p + 1}: ${calls.length} model calls, expected ${s.modelCalls[p]}`);
    for (const [text, at, label] of /** @type {Array<[string, number | undefined, string]>} */ ([
      [REPEATED_TOOL_FAILURE_REMINDER, s.reminderAtCall, 'reminder'],
      [REPETITION_WARNING_TEXT, s.warningAtCall, 'breaker warning'],
    ])) {
      const counts = calls.map((c) => occurrences(c.prompt, text));
      const first = counts.findIndex((c) => c > 0);
      const expectedFirst = at === undefined ? -1 : at - 1;
      if (first !== expectedFirst) problems.push(`prompt ${p + 1}: ${label} first in model call ${first + 1}, expected ${expectedFirst + 1} (counts ${counts.join(',')})`);
      if (counts.some((c) => c > 1)) problems.push(`prompt ${p + 1}: ${label} more than once in a model call (counts ${counts.join(',')})`);
    }
    if (s.stoppedAfterStep !== undefined) {
      if (steps.length !== s.stoppedAfterStep) problems.push(`prompt ${p + 1}: ${steps.length} steps, expected the stop after ${s.stoppedAfterStep}`);
      const last = steps[steps.length - 1];
      const settled = last.content.filter((/** @type {any} */ c) => c.type === 'tool-result' || c.type === 'tool-error').length;
      if (settled !== s.prompts[p][steps.length - 1].length) problems.push(`prompt ${p + 1}: the stopped step kept ${settled} results`);
    }
  }
  await guard.shutdown();
  await watched.shutdown();
  telemetryGuard.current = undefined;
  rmSync(dir, { recursive: true, force: true });
  const check = (/** @type {string} */ label, /** @type {string[]} */ got, /** @type {string[]} */ want) => {
    if (JSON.stringify(got) !== JSON.stringify(want)) problems.push(`${label} ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
  };
  check('decisions', decisions, s.decisions);
  check(`telemetry (${v7 ? 'genai' : 'ai-sdk'} profile) decisions`, seen.decisions, s.decisions.map(shadowTwin));
  if (s.repetition !== undefined) {
    check('breaker', repetition.slice(0, s.repetition.length), s.repetition);
    check('telemetry breaker', seen.repetition.slice(0, s.repetition.length), s.repetition.map(shadowTwin));
  }
  return problems;
}

await runSelected(`ai-sdk conformance: ai ${aiVersion} on Node ${process.versions.node}`, SCENARIOS, positionals, runScenario);
