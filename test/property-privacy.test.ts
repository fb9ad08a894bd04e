/**
 * R2: arbitrary secrets placed in tool arguments, results, error messages (`error`,
 * `error.message`, span status), paths and tool names never reach any metric attribute, log
 * attribute or log body the guard emits (design "Telemetry and privacy"), in every mode, with
 * loops long enough to reach warned and stopped.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { setGlobalErrorHandler } from '@opentelemetry/core';
import { afterEach, describe, expect, it } from 'vitest';
import { ALLOWED_GUARD_LOG_KEYS, ALLOWED_GUARD_METRIC_KEYS, auditInvariants, inputIdentifiers, sensitiveInputStrings } from '../src/replay/audit.js';
import { replayRecords } from '../src/replay/replay.js';
import { parseTelemetryText } from '../src/otlp/telemetry-file.js';
import type { GuardMode } from '../src/core/failure/types.js';
import { guardedSdk, modelRequest, startInteraction, toolCall } from './helpers/generators.js';

/** Every string reachable from a value (attribute values may be arrays or maps). */
function strings(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (typeof v === 'object' && v !== null) for (const [k, x] of Object.entries(v)) strings(x, out.concat(k));
  return out;
}

/** A secret: a fixed marker (so it cannot collide with the guard's fixed vocabulary) around arbitrary text. */
const arbSecret = fc
  .string({ unit: fc.oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }), fc.constantFrom('/', '\\', '"', '\n', '%', '{', '}')), minLength: 1, maxLength: 24 })
  .map((t) => `S3CR3T<${t}>`);

describe('R2: no argument, result, error text, path or tool identity in guard telemetry (fast-check)', () => {
  afterEach(() => setGlobalErrorHandler(() => undefined));

  it('holds for arbitrary secrets in every mode, through warned and stopped', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<GuardMode>('shadow', 'warn', 'enforce'),
        arbSecret,
        fc.integer({ min: 5, max: 7 }),
        fc.integer({ min: 2, max: 3 }),
        fc.boolean(),
        fc.constantFrom<'mcp' | 'native'>('mcp', 'native'),
        async (mode, secret, batches, perBatch, secretInToolName, kind) => {
          const s = guardedSdk({ mode });
          const promptId = 'sess-priv########1';
          const tool = secretInToolName ? `mcp__${secret}__read` : kind === 'mcp' ? 'mcp__srv__read' : 'read_file';
          const interaction = startInteraction(s.tracer, promptId);
          let n = 0;
          for (let b = 0; b < batches; b++) {
            modelRequest(s.tracer, s.logger, interaction, promptId);
            for (let c = 0; c < perBatch; c++) {
              toolCall(s.tracer, s.logger, interaction, promptId, {
                callId: `call-${++n}`,
                name: tool,
                args: JSON.stringify({ file_path: `/home/${secret}/.ssh/id_rsa`, token: secret }),
                result: `Output: ${secret}`,
                errorText: `File not found: /home/${secret}/.ssh/id_rsa`,
                statusMessage: `failed: ${secret}`,
                path: `/home/${secret}`,
              });
            }
            if (mode !== 'shadow') s.guard.control.afterToolBatch({ promptId, hasExternalInput: false, hasQueuedPrompt: false, inputReliable: true });
          }
          interaction.end();
          const decisions = s.decisions.map((d) => d.outcome.decision);
          // the loop was long enough for the whole state machine
          expect(decisions).toContain(mode === 'shadow' ? 'would_warn' : 'warned');
          expect(decisions).toContain(mode === 'enforce' ? 'stopped' : 'would_stop');

          const logs = s.guardLogs.getFinishedLogRecords();
          const points = await s.metricPoints();
          expect(logs.length).toBeGreaterThan(0);
          expect(points.length).toBeGreaterThan(0);
          for (const r of logs) {
            for (const k of Object.keys(r.attributes)) expect(ALLOWED_GUARD_LOG_KEYS.has(k) || k === 'qwen-code.rum.exclude', k).toBe(true);
            for (const v of strings([r.attributes, r.body, r.eventName])) expect(v.includes(secret), `log value ${v}`).toBe(false);
          }
          for (const p of points) {
            for (const k of Object.keys(p.attributes)) expect(ALLOWED_GUARD_METRIC_KEYS.has(k), k).toBe(true);
            for (const v of strings([p.name, p.attributes])) expect(v.includes(secret), `metric value ${v}`).toBe(false);
          }
          const all = JSON.stringify([logs.map((r) => [r.attributes, r.body, r.eventName]), points]);
          expect(all).not.toContain('S3CR3T');
          await s.shutdown();
        },
      ),
      { numRuns: 40 },
    );
  });

  it('holds for replay of a real qwen-code capture whose paths, arguments and errors carry the secret', async () => {
    const fixture = readFileSync(new URL('../fixtures/qwen-code-0.24.4/acp-enforce.outfile.json', import.meta.url), 'utf8');
    await fc.assert(
      fc.asyncProperty(arbSecret, fc.constantFrom<GuardMode | undefined>(undefined, 'shadow', 'warn', 'enforce'), async (secret, mode) => {
        const escaped = JSON.stringify(secret).slice(1, -1);
        const text = fixture.replaceAll('/workspace/demo/missing', `/home/${escaped}/missing`);
        const records = parseTelemetryText(text, 'secret.json');
        expect(sensitiveInputStrings(records).size).toBeGreaterThan(0);
        const result = await replayRecords(records, mode === undefined ? {} : { mode });
        expect(result.emitted.length).toBeGreaterThan(0);
        expect(JSON.stringify(result.emitted)).not.toContain('S3CR3T');
        for (const r of result.emitted) for (const v of strings([r.attributes, r.body])) expect(v.includes(secret)).toBe(false);
        const privacy = auditInvariants(result.decisions, result.emitted, inputIdentifiers(records)).find((r) => r.id === 'no_sensitive_telemetry');
        expect(privacy?.violations).toEqual([]);
      }),
      { numRuns: 15 },
    );
  });
});
