// @ts-check
/* global process, setTimeout, clearTimeout */
/**
 * The real frameworks of the genai conformance run, their semantic-convention generations and
 * scenarios, and how to run one scenario with its OTLP export going to a loopback sink.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startOtlpSink } from './otlp-sink.mjs';

export const here = dirname(fileURLToPath(import.meta.url));
export const venvPython = join(here, '.venv', 'bin', 'python');
/** One scenario run may take this long at most (a normal one takes 1-3 s). */
const RUN_TIMEOUT_MILLIS = 60_000;

/**
 * @typedef {object} Generation
 * @property {string} id Short name used in fixture file names.
 * @property {string} description What the framework emits in this generation.
 * @property {string[]} [args] Extra script arguments.
 * @property {Record<string, string>} [env] Extra environment.
 */

/**
 * @typedef {object} Framework
 * @property {string} id
 * @property {string} version The pinned version (requirements.txt).
 * @property {string} script The scenario driver in this folder.
 * @property {Generation[]} generations
 * @property {string[]} scenarios
 * @property {string} [profile] The profile `auto` must pick for its telemetry (default `genai`).
 * @property {boolean} [finalBatch] Every run ends with one more, successful, tool batch (smolagents
 *   answers through its `final_answer` tool): expected batches +1, calls + [1], decisions unchanged.
 * @property {string} [venv] Its virtual environment under this folder when not `.venv` (install.sh builds both).
 * @property {'typed' | 'untyped'} [failures] `untyped`: a raising tool's span carries no error type
 *   (status ERROR only), so the design's `unknown` applies (expected.json `untyped` variants).
 */

/** The scenarios of scenarios.py (the drivers written after pydantic-ai and Strands share them). */
const NEW_SCENARIOS = ['failure-loop', 'success-reset', 'parallel-batch', 'new-run', 'other-tools-between', 'alternating-types', 'returned-error-loop'];

/** @type {Framework[]} */
export const FRAMEWORKS = [
  {
    id: 'pydantic-ai',
    version: '2.68.0',
    script: 'pydantic_ai_scenarios.py',
    generations: [
      {
        id: 'v5',
        description: 'instrumentation data format 5 (the default): invoke_agent / chat / execute_tool span names',
        args: ['--version', '5'],
      },
      {
        id: 'v2',
        description: 'legacy data format 2: "agent run" / "running tool" span names, gen_ai.operation.name kept',
        args: ['--version', '2'],
      },
    ],
    scenarios: ['failure-loop', 'success-reset', 'parallel-batch', 'new-run'],
  },
  {
    id: 'strands-agents',
    version: '1.62.0',
    script: 'strands_scenarios.py',
    generations: [
      { id: 'default', description: 'v1.36-and-earlier names (gen_ai.system)', env: { OTEL_SEMCONV_STABILITY_OPT_IN: '' } },
      {
        id: 'latest',
        description: 'OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental (gen_ai.provider.name)',
        env: { OTEL_SEMCONV_STABILITY_OPT_IN: 'gen_ai_latest_experimental' },
      },
    ],
    scenarios: ['failure-loop', 'success-reset', 'parallel-batch', 'new-run', 'untyped-error-loop'],
  },
  {
    id: 'smolagents',
    version: '1.26.0',
    script: 'smolagents_scenarios.py',
    profile: 'openinference',
    finalBatch: true,
    generations: [{ id: 'openinference', description: 'openinference-instrumentation-smolagents 0.1.43 (AGENT / CHAIN / LLM / TOOL spans)' }],
    scenarios: NEW_SCENARIOS,
  },
  {
    id: 'openai-agents',
    version: '0.24.0',
    script: 'openai_agents_scenarios.py',
    profile: 'openinference',
    failures: 'untyped',
    generations: [
      {
        id: 'openinference',
        description: 'openinference-instrumentation-openai-agents 2.6.0 (AGENT root, AGENT agent, LLM, TOOL spans)',
        args: ['--instrumentation', 'openinference'],
      },
    ],
    scenarios: NEW_SCENARIOS,
  },
  {
    id: 'google-adk',
    version: '2.13.0',
    script: 'adk_scenarios.py',
    venv: '.venv-adk',
    failures: 'untyped',
    generations: [
      {
        id: 'experimental',
        description:
          'ADK_EXPERIMENTAL_TELEMETRY=true: a raising tool retried through ReflectAndRetryToolPlugin carries adk.experimental.response.source=on_tool_error_callback (no status, no type)',
        env: { ADK_EXPERIMENTAL_TELEMETRY: 'true' },
      },
    ],
    scenarios: NEW_SCENARIOS,
  },
];

/** True when install.sh has built the virtual environments. */
export function venvReady() {
  return existsSync(venvPython) && FRAMEWORKS.every((f) => existsSync(join(here, f.venv ?? '.venv', 'bin', 'python')));
}

/**
 * Runs one scenario of one framework and generation with its spans exported to `endpoint`
 * (OTLP/HTTP base URL). Resolves with the driver's exit code and stderr tail.
 * @param {Framework} framework
 * @param {Generation} generation
 * @param {string} scenario
 * @param {string} endpoint
 * @returns {Promise<{ code: number | null, stderr: string }>}
 */
export function runScenario(framework, generation, scenario, endpoint) {
  return new Promise((resolve) => {
    const child = spawn(join(here, framework.venv ?? '.venv', 'bin', 'python'), [join(here, framework.script), scenario, ...(generation.args ?? [])], {
      cwd: here,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/tmp',
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_SERVICE_NAME: `${framework.id}-conformance`,
        // Nothing may leave the machine: no proxies, no AWS lookups from boto, no telemetry of their own.
        NO_PROXY: '*',
        AWS_EC2_METADATA_DISABLED: 'true',
        PYTHONWARNINGS: 'ignore::DeprecationWarning',
        ...(generation.env ?? {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr = (stderr + String(d)).slice(-4000);
    });
    child.stdout.resume();
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MILLIS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/**
 * Runs one scenario with a fresh loopback sink that writes the collector `file` exporter shape to
 * `outFile`.
 * @param {Framework} framework
 * @param {Generation} generation
 * @param {string} scenario
 * @param {string} outFile
 */
export async function recordScenario(framework, generation, scenario, outFile) {
  const sink = await startOtlpSink({ outFile });
  try {
    return await runScenario(framework, generation, scenario, sink.url);
  } finally {
    await sink.close();
  }
}

/** Fixture path of one recorded scenario, relative to the repository root (under the profile that reads it). */
export function fixturePath(/** @type {Framework} */ framework, /** @type {Generation} */ generation, /** @type {string} */ scenario) {
  return join('fixtures', framework.profile ?? 'genai', `${framework.id}-${framework.version}`, `${scenario}.${generation.id}.otlp.jsonl`);
}
