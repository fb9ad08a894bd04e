/**
 * Scale-out end to end (`npm run test:scale-out`): agents → a front collector
 * (collector-config/front-tier.yaml, `load_balancing` on `session.id`) → 3 `serve` replicas (child
 * processes, OTLP/gRPC, each requiring a bearer token the front tier sends) → an ops backend
 * (collector-config/otelcol.yaml), fed a mixed fleet in real time: the real qwen-code, Claude Code
 * and gemini-cli captures (each under its own Resource, routed by its `session.id`) and a generated
 * stream of 72 interleaved qwen-code sessions. The same records go, at the same moments, straight
 * to one reference `serve`; `replay` reads them too.
 *
 * Three runs: a steady one; one where a replica is killed (SIGKILL) mid-stream and started again
 * on the same port; and the same kill with replicas that judge every prompt (without
 * `--new-prompts-only`), which must show the decisions the flag prevents. Everything listens on
 * 127.0.0.1 and stops by itself.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { batchCountBucket, failureCountBucket } from '../../src/core/buckets.js';
import type { BatchDecision } from '../../src/engine/failure-types.js';
import type { RecordBatch } from '../../src/otlp/records.js';
import { hrTimeToMillis } from '../../src/profiles/wire-profile.js';
import { replayRecords } from '../../src/replay/replay.js';
import { startGuardServer } from '../../src/serve/guard-server.js';
import type { GuardServer } from '../../src/serve/guard-server.js';
import { ensureCollectorBuilt, startCollector } from '../e2e/collector-process.js';
import type { RunningCollector } from '../e2e/collector-process.js';
import { readOutputFiles } from '../e2e/otlp-files.js';
import type { Item } from '../e2e/otlp-files.js';
import { parseTelemetryText } from '../../src/otlp/telemetry-file.js';
import { loadFixture } from '../helpers/recorded.js';
import { firstMillis, play, PlayerTarget, shifted } from './player.js';
import { freePort, startServeProcess } from './serve-process.js';
import type { ServeProcess } from './serve-process.js';
import { generateSessionStream } from './session-stream.js';
import type { SessionStream } from './session-stream.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FRONT_CONFIG = join(REPO_ROOT, 'collector-config', 'front-tier.yaml');
const OPS_CONFIG = join(REPO_ROOT, 'collector-config', 'otelcol.yaml');
const FIXTURES = ['acp-enforce', 'acp-shadow-drain', 'acp-shadow-nodrain', 'headless-yolo'];
/**
 * The other agents of the fleet: real captures whose records all carry `session.id` (Claude Code on
 * every span and event, gemini-cli on its Resource), the key the front tier routes on, and whose
 * profiles read a prompt's start record (what `--new-prompts-only` admits a prompt on).
 */
const OTHER_AGENTS = [
  'claude-code-2.1.328/bash-git-loop-shadow.otlp.jsonl',
  'claude-code-2.1.328/parallel-batch-shadow.otlp.jsonl',
  'claude-code-2.1.328/read-missing-loop-shadow.otlp.jsonl',
  'claude-code-2.1.328/same-tool-success-resets-shadow.otlp.jsonl',
  'gemini-cli-0.61.0/typed-failure-loop-shadow.outfile.json',
  'gemini-cli-0.61.0/parallel-mixed-outcomes-shadow.outfile.json',
  'gemini-cli-0.61.0/warn-recovers.outfile.json',
].map((f) => join(REPO_ROOT, 'fixtures', f));
const GUARD_SCOPE = 'repeated-tool-failure-guard';
/** Each agent's guard events and counters carry its own namespace (`qwen-code.`, `claude-code.`, `gemini-cli.`). */
const isGuardEvent = (name: string): boolean => name.endsWith('.repeated_tool_failure_guard');
const isGuardMetric = (name: string): boolean => name.endsWith('.repeated_tool_failure_guard.count');
const REPLICAS = 3;
const SESSIONS = 72;
/** Each replica's reorder grace: longer than the span flush plus the front tier's batching. */
const GRACE_MILLIS = 4_000;
/** qwen-code flushes logs every 1 s and spans every 5 s; the test halves the log interval and takes 2 s for spans. */
const FLUSH = { logMillis: 500, spanMillis: 2_000 };
/** Sessions start this far apart (72 sessions over 18 s, each running 1 to 10 s). */
const STAGGER_MILLIS = 250;
/**
 * The earliest kill, after the stream's start (once some decisions are in the ops backend): some of
 * the victim's prompts are running, and sessions keep starting for 8 s after its restart.
 */
const KILL_AFTER_MILLIS = 8_500;
/** How long the killed replica stays down, in milliseconds. */
const DOWN_MILLIS = 1_500;

/** One decision as compared: the diagnostic log's decision fields. */
type Key = string;
const key = (a: { decision: unknown; phaseBefore: unknown; phaseAfter: unknown; failure: unknown; batch: unknown; ordinal: unknown; reset: unknown }): Key =>
  [a.decision, `${String(a.phaseBefore)}>${String(a.phaseAfter)}`, a.failure, a.batch, a.ordinal, a.reset ?? ''].join('|');

function keyOf(d: BatchDecision): Key {
  const o = d.outcome;
  return key({
    decision: o.decision,
    phaseBefore: o.phaseBefore,
    phaseAfter: o.phaseAfter,
    failure: failureCountBucket(o.failureCount),
    batch: batchCountBucket(o.batchCount),
    ordinal: o.candidateOrdinal,
    reset: o.resetReason,
  });
}

/** prompt id → its decisions (not `none`), in order. */
type Decisions = Map<string, Key[]>;

function byPrompt(decisions: readonly BatchDecision[]): Decisions {
  const out: Decisions = new Map();
  for (const d of decisions) {
    if (d.outcome.decision === 'none') continue;
    const list = out.get(d.promptId) ?? [];
    list.push(keyOf(d));
    out.set(d.promptId, list);
  }
  return out;
}

/** The guard's diagnostic logs in the ops backend, per `service.instance.id`, per prompt, in emission order. */
function decisionsByInstance(logs: readonly Item[]): Map<string, Decisions> {
  const guardLogs = logs
    .map((item, index) => ({ item, index }))
    .filter(({ item }) => item.scope === GUARD_SCOPE && isGuardEvent(item.name))
    .sort((a, b) => String(a.item.attributes['event.timestamp']).localeCompare(String(b.item.attributes['event.timestamp'])) || a.index - b.index);
  const out = new Map<string, Decisions>();
  for (const { item } of guardLogs) {
    const instance = String(item.resourceAttributes['service.instance.id']);
    const a = item.attributes;
    const decisions = out.get(instance) ?? new Map<string, Key[]>();
    const promptId = String(a['prompt_id']);
    const list = decisions.get(promptId) ?? [];
    list.push(
      key({
        decision: a['decision'],
        phaseBefore: a['phase_before'],
        phaseAfter: a['phase_after'],
        failure: a['failure_count_bucket'],
        batch: a['batch_count_bucket'],
        ordinal: a['candidate_ordinal'],
        reset: a['reset_reason'],
      }),
    );
    decisions.set(promptId, list);
    out.set(instance, decisions);
  }
  return out;
}

function union(parts: Iterable<Decisions>): Decisions {
  const out: Decisions = new Map();
  for (const part of parts) for (const [promptId, keys] of part) out.set(promptId, [...(out.get(promptId) ?? []), ...keys]);
  return out;
}

const sorted = (d: Decisions): Array<[string, Key[]]> => [...d.entries()].sort(([a], [b]) => a.localeCompare(b));

/** A prompt start record of each agent: its `event.name` and the attribute holding the prompt id. */
const PROMPT_STARTS: ReadonlyMap<string, string> = new Map([
  ['qwen-code.user_prompt', 'prompt_id'],
  ['user_prompt', 'prompt.id'], // Claude Code (scope com.anthropic.claude_code.events)
  ['gemini_cli.user_prompt', 'prompt_id'],
]);

/** Each prompt's start (event time, ms) and session, from its agent's start record. */
function promptStartsOf(input: RecordBatch): { starts: Map<string, number>; sessions: Map<string, string> } {
  const starts = new Map<string, number>();
  const sessions = new Map<string, string>();
  for (const l of input.logs) {
    const idKey = PROMPT_STARTS.get(String(l.attributes['event.name']));
    const promptId = idKey === undefined ? undefined : l.attributes[idKey];
    if (typeof promptId !== 'string') continue;
    starts.set(promptId, hrTimeToMillis(l.hrTime));
    const session = l.attributes['session.id'] ?? l.resource?.attributes['session.id'];
    if (typeof session === 'string') sessions.set(promptId, session);
  }
  return { starts, sessions };
}

interface RunResult {
  readonly stream: SessionStream;
  readonly input: RecordBatch;
  readonly replicaIds: readonly string[];
  readonly byInstance: Map<string, Decisions>;
  readonly single: Decisions;
  readonly replayed: Decisions;
  readonly metrics: readonly Item[];
  /** The killed replica's instance ids, before and after its restart, and when the restart began (ms since the epoch). */
  readonly killed?: { readonly before: string; readonly after: string; readonly restartedAtMillis: number };
  /** Each prompt's start: the event time of its agent's start record, in milliseconds since the epoch. */
  readonly promptStarts: ReadonlyMap<string, number>;
  /** Each prompt's session (`session.id`, the routing key). */
  readonly sessionOf: ReadonlyMap<string, string>;
  /** Prompts of the other agents' captures. */
  readonly otherAgentPrompts: ReadonlySet<string>;
  readonly playerFailures: number;
}

/** The replica with the most records in the ops backend's operator logs so far (`undefined`: none yet). */
function busiestReplica(operatorDir: string, replicas: readonly ServeProcess[]): number | undefined {
  const file = join(operatorDir, 'logs.jsonl');
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  const counts = replicas.map((r) => text.split(`"${r.instanceId}"`).length - 1);
  const most = Math.max(...counts);
  return most > 0 ? counts.indexOf(most) : undefined;
}

/** The whole input: the generated sessions, and each real capture moved to run alongside them. */
function buildInput(startMillis: number): { stream: SessionStream; input: RecordBatch; otherAgents: RecordBatch } {
  const stream = generateSessionStream({ sessions: SESSIONS, seed: 16, startMillis, staggerMillis: STAGGER_MILLIS });
  const input: RecordBatch = { spans: [...stream.records.spans], logs: [...stream.records.logs], metricCount: 0, ignoredCount: 0 };
  const otherAgents: RecordBatch = { spans: [], logs: [], metricCount: 0, ignoredCount: 0 };
  FIXTURES.forEach((name, i) => {
    const capture = loadFixture(name);
    const moved = shifted(capture, startMillis + 1_000 + i * 2_500 - firstMillis(capture));
    input.spans.push(...moved.spans);
    input.logs.push(...moved.logs);
  });
  OTHER_AGENTS.forEach((path, i) => {
    const capture = parseTelemetryText(readFileSync(path, 'utf8'), path);
    const moved = shifted(capture, startMillis + 1_500 + i * 1_500 - firstMillis(capture));
    for (const batch of [input, otherAgents]) {
      batch.spans.push(...moved.spans);
      batch.logs.push(...moved.logs);
    }
  });
  return { stream, input, otherAgents };
}

async function run(kind: 'steady' | 'kill' | 'kill-without-new-prompts-only'): Promise<RunResult> {
  const workDir = mkdtempSync(join(tmpdir(), `guard-scale-out-${kind}-`));
  const operatorDir = join(workDir, 'operator');
  let ops: RunningCollector | undefined;
  let front: RunningCollector | undefined;
  let single: GuardServer | undefined;
  const replicas: ServeProcess[] = [];
  const targets: PlayerTarget[] = [];
  try {
    ops = await startCollector({ configPath: OPS_CONFIG, env: { GUARD_OPERATOR_DIR: operatorDir, GUARD_RUM_DIR: join(workDir, 'rum') } });
    const ports: number[] = [];
    for (let i = 0; i < REPLICAS; i++) ports.push(await freePort());
    // The replicas require a bearer token (as on a non-loopback address); the front tier sends it.
    const token = randomBytes(24).toString('base64url');
    const tokenFile = join(workDir, 'replica-token');
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    const start = (i: number, suffix = ''): Promise<ServeProcess> =>
      startServeProcess({
        grpcPort: ports[i] as number,
        instanceId: `${kind}-replica-${i + 1}${suffix}`,
        exportEndpoint: `http://${ops?.httpEndpoint ?? ''}`,
        graceMillis: GRACE_MILLIS,
        newPromptsOnly: kind !== 'kill-without-new-prompts-only',
        bearerTokenFile: tokenFile,
      });
    replicas.push(...(await Promise.all(ports.map((_, i) => start(i)))));
    front = await startCollector({
      configPath: FRONT_CONFIG,
      env: {
        GUARD_REPLICAS: `[${replicas.map((r) => r.grpcEndpoint).join(', ')}]`,
        GUARD_OPS_OTLP_GRPC_ENDPOINT: ops.grpcEndpoint,
        GUARD_FRONT_RETRY_INITIAL_INTERVAL: '300ms',
        GUARD_FRONT_RETRY_MAX_ELAPSED_TIME: '20s',
        GUARD_REPLICA_TOKEN: token,
      },
    });
    single = await startGuardServer({ port: 0, grpcPort: 0, graceMillis: GRACE_MILLIS, newPromptsOnly: true, print: () => undefined });
    targets.push(new PlayerTarget(front.grpcEndpoint), new PlayerTarget(single.grpcAddress ?? ''));

    const startMillis = Math.ceil((Date.now() + 1_500) / 1_000) * 1_000;
    const { stream, input, otherAgents } = buildInput(startMillis);
    const replay = await replayRecords(input, { mode: 'shadow' });

    let killed: { before: string; after: string; restartedAtMillis: number } | undefined;
    let restart: Promise<void> | undefined;
    const killAt = startMillis + KILL_AFTER_MILLIS;
    await play(input, FLUSH, targets, (now) => {
      // The victim is the replica whose decisions reached the ops backend most so far: it has state to lose.
      const index = kind !== 'steady' && restart === undefined && now >= killAt ? busiestReplica(operatorDir, replicas) : undefined;
      if (index !== undefined) {
        const victim = replicas[index] as ServeProcess;
        restart = (async () => {
          await victim.kill();
          await new Promise((r) => setTimeout(r, DOWN_MILLIS));
          const restartedAtMillis = Date.now();
          const restarted = await start(index, '-restarted');
          replicas[index] = restarted;
          killed = { before: victim.instanceId, after: restarted.instanceId, restartedAtMillis };
        })();
      }
      return Promise.resolve();
    });
    await restart;
    // The last records wait out the front tier's batching and every replica's grace.
    await new Promise((r) => setTimeout(r, GRACE_MILLIS + 2_000));
    await front.stop();
    await Promise.all(replicas.map((r) => r.stop()));
    await single.close();
    await ops.stop();
    const output = readOutputFiles(operatorDir);
    const summary = [...decisionsByInstance(output.bySignal.logs)].map(([id, d]) => `${id}: ${d.size} prompts`);
    process.stderr.write(`scale-out ${kind}: ${summary.join(', ')}\n${replicas.map((r) => r.output().trim()).join('\n')}\n`);
    return {
      stream,
      input,
      replicaIds: replicas.map((r) => r.instanceId),
      byInstance: decisionsByInstance(output.bySignal.logs),
      single: byPrompt(single.decisions),
      replayed: byPrompt(replay.decisions),
      metrics: output.bySignal.metrics.filter((m) => isGuardMetric(m.name)),
      killed,
      promptStarts: promptStartsOf(input).starts,
      sessionOf: promptStartsOf(input).sessions,
      otherAgentPrompts: new Set(promptStartsOf(otherAgents).starts.keys()),
      playerFailures: targets.reduce((n, t) => n + t.failures, 0),
    };
  } finally {
    await Promise.all(targets.map((t) => t.shutdown()));
    await front?.stop();
    await Promise.all(replicas.map((r) => r.stop()));
    await single?.close();
    await ops?.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  await ensureCollectorBuilt();
}, 600_000);

describe('3 serve replicas behind the load_balancing front tier, steady', () => {
  let r: RunResult;
  beforeAll(async () => {
    r = await run('steady');
  }, 240_000);

  it('every export reached the front tier and the reference serve', () => {
    expect(r.playerFailures).toBe(0);
  });

  it('(a) each session lands on exactly one replica, and the replicas share the sessions', () => {
    const instancesOf = new Map<string, Set<string>>();
    for (const [instance, decisions] of r.byInstance) {
      for (const promptId of decisions.keys()) {
        const session = r.sessionOf.get(promptId) ?? promptId;
        const set = instancesOf.get(session) ?? new Set<string>();
        set.add(instance);
        instancesOf.set(session, set);
      }
    }
    for (const s of r.stream.sessions) expect([s.sessionId, instancesOf.get(s.sessionId)?.size]).toEqual([s.sessionId, 1]);
    expect([...instancesOf.values()].every((set) => set.size === 1)).toBe(true);
    expect([...r.byInstance.keys()].sort()).toEqual([...r.replicaIds].sort());
    for (const decisions of r.byInstance.values()) expect(decisions.size).toBeGreaterThan(5);
  });

  it('(b) the union of the replicas decisions equals one serve and replay on the same input', () => {
    const all = union(r.byInstance.values());
    expect(r.single.size).toBeGreaterThanOrEqual(SESSIONS);
    expect(sorted(all)).toEqual(sorted(r.single));
    expect(sorted(r.single)).toEqual(sorted(r.replayed));
    // the stream holds every kind of decision
    const kinds = new Set([...r.single.values()].flat().map((k) => k.split('|')[0]));
    expect([...kinds].sort()).toEqual(['reset', 'tracked', 'would_stop', 'would_warn']);
  });

  it('(e) a mixed fleet: the other agents\' prompts are judged, each on one replica, exactly as by one serve and replay', () => {
    const all = union(r.byInstance.values());
    const theirs = [...r.otherAgentPrompts];
    expect(theirs.length).toBe(OTHER_AGENTS.length);
    for (const promptId of theirs) {
      expect([promptId, all.get(promptId)?.length ?? 0]).not.toEqual([promptId, 0]);
      expect([promptId, all.get(promptId)]).toEqual([promptId, r.replayed.get(promptId)]);
    }
    // Their sessions spread over more than one replica.
    const replicasOf = new Set(theirs.map((p) => [...r.byInstance].find(([, d]) => d.has(p))?.[0]));
    expect(replicasOf.size).toBeGreaterThan(1);
  });

  it('(d) each replica counts its own decisions under its own service.instance.id', () => {
    expect(r.metrics.length).toBeGreaterThan(0);
    for (const p of r.metrics) {
      expect(p.scope).toBe(GUARD_SCOPE);
      expect(p.resourceAttributes['service.name']).toBe(GUARD_SCOPE);
      expect(r.replicaIds).toContain(p.resourceAttributes['service.instance.id']);
    }
    for (const instance of r.replicaIds) {
      const series = new Map<string, number>();
      for (const p of r.metrics.filter((m) => m.resourceAttributes['service.instance.id'] === instance)) {
        series.set(`${p.name} ${JSON.stringify(Object.entries(p.attributes).sort())}`, Number(p.value));
      }
      const counted = [...series.values()].reduce((a, b) => a + b, 0);
      const logged = [...(r.byInstance.get(instance)?.values() ?? [])].reduce((n, keys) => n + keys.length, 0);
      expect([instance, counted]).toEqual([instance, logged]);
    }
  });
});

describe('a replica killed mid-stream and restarted on the same port', () => {
  let r: RunResult;
  beforeAll(async () => {
    r = await run('kill');
  }, 240_000);

  it('the kill happened mid-stream and the restarted replica came back', () => {
    expect(r.killed).toBeDefined();
    expect(r.byInstance.has(r.killed?.before ?? '')).toBe(true);
  });

  it('(c) no replica emits a decision the single instance did not make: each replica decision list is a prefix of the single instance list', () => {
    for (const [instance, decisions] of r.byInstance) {
      for (const [promptId, keys] of decisions) {
        const reference = r.single.get(promptId) ?? [];
        expect({ instance, promptId, keys }).toEqual({ instance, promptId, keys: reference.slice(0, keys.length) });
      }
    }
  });

  it('(c) the other replicas prompts are unchanged', () => {
    const others = [...r.byInstance.entries()].filter(([instance]) => instance !== r.killed?.before && instance !== r.killed?.after);
    expect(others).toHaveLength(REPLICAS - 1);
    const theirs = union(others.map(([, d]) => d));
    expect(theirs.size).toBeGreaterThan(10);
    for (const [promptId, keys] of theirs) expect([promptId, keys]).toEqual([promptId, r.single.get(promptId)]);
  });

  it('(c) the killed replica in-flight prompts lost decisions (they may miss a warning)', () => {
    const all = union(r.byInstance.values());
    const short = [...r.single].filter(([promptId, keys]) => (all.get(promptId)?.length ?? 0) < keys.length);
    expect(short.length).toBeGreaterThan(0);
  });

  it('(c) the restarted replica judges only prompts that started after its restart, and those in full', () => {
    const before = r.byInstance.get(r.killed?.before ?? '') ?? new Map<string, Key[]>();
    const after = r.byInstance.get(r.killed?.after ?? '') ?? new Map<string, Key[]>();
    expect(after.size).toBeGreaterThan(0);
    for (const [promptId, keys] of after) {
      expect([promptId, (r.promptStarts.get(promptId) ?? 0) >= (r.killed?.restartedAtMillis ?? Infinity)]).toEqual([promptId, true]);
      expect(before.has(promptId)).toBe(false);
      expect([promptId, keys]).toEqual([promptId, r.single.get(promptId)]);
    }
  });
});

describe('the same kill without --new-prompts-only (why the flag exists)', () => {
  let r: RunResult;
  beforeAll(async () => {
    r = await run('kill-without-new-prompts-only');
  }, 240_000);

  it('the restarted replica judges prompts that were running before it started, from the middle: batches one serve judged differently', () => {
    const after = r.byInstance.get(r.killed?.after ?? '') ?? new Map<string, Key[]>();
    const partial = [...after.keys()].filter((promptId) => (r.promptStarts.get(promptId) ?? 0) < (r.killed?.restartedAtMillis ?? 0));
    expect(partial.length).toBeGreaterThan(0);
  });
});
