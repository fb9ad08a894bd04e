// @ts-check
/* global process, console, setTimeout, clearTimeout */
/**
 * Runs the pi conformance scenarios against the real pi CLI (`@mariozechner/pi-coding-agent`
 * 0.73.1, from conformance/pi/node_modules) offline: its `models.json` points a provider at a
 * scripted OpenAI-compatible server on 127.0.0.1 (fake-openai.mjs), and the guard is loaded as an
 * extension (`-e dist/pi.js`, mode by the `--repeated-tool-failure-guard` flag). The tools really
 * run in a scratch directory that is not a git repository: `git status` and `git log -1` exit 128
 * (key `(bash, exit_128)`), `cat missing.txt` exits 1 (another key), `git --version` succeeds.
 *
 * Checks the decisions the design gives (the extension's decisions file), and their effects on
 * the requests the model received: the reminder is in no request before the expected one and
 * in at most one request; in enforce no request follows the stop. The breaker (seed): warn at the
 * third byte-identical call, abort at the fifth, which never runs (`echo x >> count.txt`: the
 * file's lines count the runs).
 *
 * Usage: node conformance/pi/run-all.mjs [scenario-name ...]
 * Exit code: 0 when every selected scenario passed; 1 otherwise (or pi is missing).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startFakeOpenAi } from './fake-openai.mjs';
import { readmeBlock } from '../readme-block.mjs';
import { runSelected } from '../scenario-loop.mjs';
import { compact } from '../decisions.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const piPackage = join(here, 'node_modules', '@mariozechner', 'pi-coding-agent');
const piCli = join(piPackage, 'dist', 'cli.js');
if (!existsSync(piCli)) {
  console.error(`pi conformance: ${piCli} is missing; run npm run conformance:pi:install`);
  process.exit(1);
}
const extension = join(root, 'dist', 'pi.js');
const { REPEATED_TOOL_FAILURE_REMINDER, REPETITION_WARNING_TEXT } = await import(pathToFileURL(join(root, 'dist', 'index.js')).href);
const piVersion = JSON.parse(readFileSync(join(piPackage, 'package.json'), 'utf8')).version;
const RUN_TIMEOUT_MILLIS = 120_000;

const bash = (/** @type {string} */ command) => ({ name: 'bash', args: { command } });
const A = bash('git status');
const B = bash('git log -1');
const OK = bash('git --version');
const CAT = bash('cat missing.txt');
const LS = { name: 'ls', args: { path: '.' } };
const ECHO = bash('echo x >> count.txt');
const LOOP = Array.from({ length: 6 }, () => [A, B]);
const T = (/** @type {string} */ d) => [`b1:tracked(1-2,1)#1`, `b2:tracked(3-4,2)#1`, `b3:tracked(5-7,3+)#1`, ...d.split(' ')];

/**
 * @typedef {{ name: string, args: Record<string, unknown> }} Call
 * @typedef {{
 *   name: string, mode: 'shadow' | 'warn' | 'enforce', prompts: Call[][][],
 *   decisions: string[], repetition?: string[], requests: number,
 *   reminderAt?: number, warningFrom?: number, countLines?: number,
 *   installed?: boolean, readme?: boolean,
 * }} Scenario
 */
/** @type {Scenario[]} */
const SCENARIOS = [
  { name: 'git-128-loop-shadow', mode: 'shadow', prompts: [LOOP], decisions: T('b4:would_warn(8+,3+)#1 b5:would_stop(8+,3+)#1'), requests: 7 },
  { name: 'git-128-loop-warn', mode: 'warn', prompts: [LOOP], decisions: T('b4:warned(8+,3+)#1 b5:would_stop(8+,3+)#1'), requests: 7, reminderAt: 5 },
  { name: 'git-128-loop-enforce', mode: 'enforce', prompts: [LOOP], decisions: T('b4:warned(8+,3+)#1 b5:stopped(8+,3+)#1'), requests: 5, reminderAt: 5 },
  // The same, with the package installed the way pi installs packages (`pi install <path>`, its
  // package.json `pi.extensions`) instead of `-e`.
  { name: 'git-128-loop-enforce-installed', mode: 'enforce', installed: true, prompts: [LOOP], decisions: T('b4:warned(8+,3+)#1 b5:stopped(8+,3+)#1'), requests: 5, reminderAt: 5 },
  // README's pi example, its `pi` lines as written (`pi install` from the clone, then one prompt
  // in enforce); the default model is the fake provider's (settings.json).
  { name: 'readme-example', mode: 'enforce', readme: true, prompts: [LOOP], decisions: T('b4:warned(8+,3+)#1 b5:stopped(8+,3+)#1'), requests: 5, reminderAt: 5 },
  {
    name: 'parallel-mixed-shadow',
    mode: 'shadow',
    prompts: [[[A, B, LS], [A, LS, B], [A, CAT], [A, B]]],
    decisions: ['b1:tracked(1-2,1)#1', 'b2:tracked(3-4,2)#1', 'b3:reset:mixed(3-4,2)#1', 'b4:tracked(1-2,1)#2'],
    requests: 5,
  },
  {
    name: 'success-resets-shadow',
    mode: 'shadow',
    prompts: [[[A, B], [A, B], [A, B], [OK], [A, B]]],
    decisions: T('b4:reset:success(5-7,3+)#1 b5:tracked(1-2,1)#2'),
    requests: 6,
  },
  {
    name: 'new-prompt-resets-warn',
    mode: 'warn',
    prompts: [[[A, B], [A, B], [A, B]], [[A, B], [A, B], [A, B]]],
    decisions: T('p2/b1:tracked(1-2,1)#1 p2/b2:tracked(3-4,2)#1 p2/b3:tracked(5-7,3+)#1'),
    requests: 8,
  },
  {
    name: 'warn-recovers',
    mode: 'warn',
    prompts: [[[A, B], [A, B], [A, B], [A, B], [OK]]],
    decisions: T('b4:warned(8+,3+)#1 b5:reset:success(8+,3+)#1'),
    requests: 6,
    reminderAt: 5,
  },
  {
    name: 'identical-call-breaker-shadow',
    mode: 'shadow',
    prompts: [Array.from({ length: 30 }, () => [ECHO])],
    decisions: [],
    repetition: ['would_warn(3-4)', 'would_abort(5-7)'],
    requests: 31,
    countLines: 30,
  },
  {
    name: 'identical-call-breaker-enforce',
    mode: 'enforce',
    prompts: [Array.from({ length: 30 }, () => [ECHO])],
    decisions: [],
    repetition: ['warned(3-4)', 'aborted(5-7)'],
    requests: 5,
    warningFrom: 4,
    countLines: 4,
  },
];

/** Run pi once; resolves with its exit code (or `timeout`). */
function runPi(/** @type {string[]} */ args, /** @type {Record<string, string>} */ env, /** @type {string} */ cwd) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [piCli, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MILLIS);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: signal === 'SIGKILL' ? 'timeout' : code, out });
    });
  });
}

const count = (/** @type {string[]} */ texts, /** @type {string} */ text) => texts.reduce((n, t) => n + (t.split(text).length - 1), 0);

/** Run one scenario; returns the problems found. */
async function runScenario(/** @type {Scenario} */ s) {
  const problems = [];
  const work = mkdtempSync(join(tmpdir(), 'rtfg-pi-'));
  const cwd = join(work, 'project');
  const agentDir = join(work, 'agent');
  mkdirSync(cwd);
  mkdirSync(agentDir);
  writeFileSync(join(cwd, 'README.md'), '# demo\n');
  const decisionsFile = join(work, 'decisions.jsonl');
  const fake = await startFakeOpenAi(s.prompts);
  writeFileSync(
    join(agentDir, 'models.json'),
    JSON.stringify({
      providers: {
        fake: { baseUrl: fake.baseUrl, api: 'openai-completions', apiKey: 'fake', compat: { supportsDeveloperRole: false, supportsReasoningEffort: false }, models: [{ id: 'fake-model' }] },
      },
    }),
  );
  writeFileSync(join(agentDir, 'settings.json'), JSON.stringify({ defaultProvider: 'fake', defaultModel: 'fake-model' }));
  const env = { PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: '1', PI_SKIP_VERSION_CHECK: '1', PI_TELEMETRY: '0', GIT_CEILING_DIRECTORIES: work, RTFG_PI_DECISIONS: decisionsFile };
  if (s.installed === true) {
    const installed = /** @type {{ code: number | string, out: string }} */ (await runPi(['install', root], env, cwd));
    if (installed.code !== 0) problems.push(`pi install ${root}: exit ${installed.code}`);
  }
  const load = s.installed === true ? [] : ['-e', extension];
  const args = ['-p', '--no-session', '--provider', 'fake', '--model', 'fake-model', '--tools', 'read,bash,ls', '--no-skills', '--no-prompt-templates', ...load, '--repeated-tool-failure-guard', s.mode, ...s.prompts.map((_, i) => `Task ${i + 1}: find the git remote`)];
  let run = { code: /** @type {number | string} */ (0), out: '' };
  if (s.readme === true) {
    // Each `pi` line of the block, its words as a shell splits them ($PWD: the clone for
    // `pi install`, which the README runs there; the project for the prompt).
    for (const line of readmeBlock('pi').split('\n').map((l) => l.replace(/\s+#.*$/, '').trim()).filter((l) => l.startsWith('pi '))) {
      const words = [...line.slice(3).matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');
      const inClone = words[0] === 'install';
      run = /** @type {{ code: number | string, out: string }} */ (await runPi(words.map((w) => w.replace('$PWD', inClone ? root : cwd)), env, inClone ? root : cwd));
      if (inClone && run.code !== 0) problems.push(`README: pi ${line}: exit ${run.code}`);
    }
  } else run = /** @type {{ code: number | string, out: string }} */ (await runPi(args, env, cwd));
  await fake.close();
  if (run.code === 'timeout') problems.push('pi did not exit in time');
  const lines = existsSync(decisionsFile) ? readFileSync(decisionsFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
  /** @type {Map<string, number>} */
  const prompts = new Map();
  const decisions = [];
  const repetition = [];
  for (const l of lines) {
    if (l.guard === 'identical_call') {
      repetition.push(`${l.decision}(${l.runLengthBucket})`);
      continue;
    }
    if (!prompts.has(l.promptId)) prompts.set(l.promptId, prompts.size + 1);
    decisions.push(compact({ ...l, prompt: prompts.get(l.promptId) }));
  }
  if (JSON.stringify(decisions) !== JSON.stringify(s.decisions)) problems.push(`decisions ${JSON.stringify(decisions)}, expected ${JSON.stringify(s.decisions)}`);
  if (s.repetition !== undefined) {
    const got = repetition.filter((r) => !r.startsWith('reset')).slice(0, s.repetition.length);
    if (JSON.stringify(got) !== JSON.stringify(s.repetition)) problems.push(`breaker ${JSON.stringify(repetition)}, expected ${JSON.stringify(s.repetition)} first`);
  }
  if (fake.requests.length !== s.requests) problems.push(`${fake.requests.length} model requests, expected ${s.requests}`);
  const reminders = fake.requests.map((r) => count(r.texts, REPEATED_TOOL_FAILURE_REMINDER));
  const expectedReminders = fake.requests.map((_, i) => (i + 1 === s.reminderAt ? 1 : 0));
  if (JSON.stringify(reminders) !== JSON.stringify(expectedReminders)) problems.push(`reminder per request ${reminders.join(',')}, expected ${expectedReminders.join(',')}`);
  const warnings = fake.requests.map((r) => count(r.texts, REPETITION_WARNING_TEXT));
  const firstWarning = warnings.findIndex((w) => w > 0) + 1;
  if (firstWarning !== (s.warningFrom ?? 0) || warnings.some((w) => w > 1)) problems.push(`breaker warning per request ${warnings.join(',')}, expected once from request ${s.warningFrom ?? 'none'}`);
  if (s.countLines !== undefined) {
    const ran = existsSync(join(cwd, 'count.txt')) ? readFileSync(join(cwd, 'count.txt'), 'utf8').trim().split('\n').length : 0;
    if (ran !== s.countLines) problems.push(`the identical call ran ${ran} times, expected ${s.countLines}`);
  }
  if (problems.length > 0) problems.push(`pi exit ${run.code}; output tail: ${JSON.stringify(run.out.slice(-400))}`);
  rmSync(work, { recursive: true, force: true });
  return problems;
}

await runSelected(`pi conformance: pi-coding-agent ${piVersion} on Node ${process.versions.node}`, SCENARIOS, process.argv.slice(2), runScenario);
