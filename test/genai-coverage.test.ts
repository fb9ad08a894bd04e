import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { genAiCoverage, genAiCoverageNotes } from '../src/profiles/genai/coverage.js';
import { GENAI_DIALECT } from '../src/profiles/genai/genai-profile.js';

/**
 * Issue #33 (2) and (7): a GenAI producer that records no tool calls (crewAI 1.15 with OpenLLMetry)
 * or no model calls (Semantic Kernel 1.45 without its diagnostics switch) is named, with what is
 * missing and, for Semantic Kernel, the switch that adds it (semantic-kernel 1.45.0
 * `ModelDiagnosticSettings`: env prefix SEMANTICKERNEL_EXPERIMENTAL_GENAI_; `function_tracer.py`
 * writes `execute_tool {function}` spans regardless).
 */
const span = (name: string, op: string) => ({ name, attributes: { 'gen_ai.operation.name': op } });

describe('genai coverage notes', () => {
  it.each([
    ['runs and model calls, no tool calls', [span('invoke_agent crew', 'invoke_agent'), span('chat m', 'chat')], /^no tool call spans: 1 agent run\(s\) and 1 model call\(s\), but no `execute_tool` span/],
    ['tool calls, no model calls', [span('execute_tool f', 'execute_tool'), span('execute_tool f', 'execute_tool')], /^no model-call spans: 2 `execute_tool` span\(s\) but no chat, generate_content or text_completion span/],
    ['all three', [span('invoke_agent a', 'invoke_agent'), span('chat m', 'chat'), span('execute_tool f', 'execute_tool')], undefined],
    ['nothing of the kind', [{ name: 'GET /', attributes: {} }], undefined],
  ])('%s', (_l, spans, want) => {
    const notes = genAiCoverageNotes(genAiCoverage(spans, GENAI_DIALECT), '`execute_tool`');
    if (want === undefined) expect(notes).toEqual([]);
    else expect(notes[0]).toMatch(want);
  });
});

/** One OTLP JSON line: a trace of `spans` (name, operation, parent index, error) under one Resource. */
function otlpLine(spans: { name: string; op: string; parent?: number; error?: boolean }[]): string {
  const trace = 'ab'.repeat(16);
  const id = (i: number) => (i + 1).toString(16).padStart(16, '0');
  const t0 = 1_796_000_000_000_000_000n;
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'sk-app' } }] },
        scopeSpans: [
          {
            scope: { name: 'semantic_kernel.functions.kernel_function' },
            spans: spans.map((s, i) => ({
              traceId: trace,
              spanId: id(i),
              ...(s.parent === undefined ? {} : { parentSpanId: id(s.parent) }),
              name: s.name,
              kind: 1,
              startTimeUnixNano: String(t0 + BigInt(i) * 1_000_000n),
              endTimeUnixNano: String(t0 + BigInt(i) * 1_000_000n + (s.parent === undefined ? 1_000_000_000n : 500_000n)),
              attributes: [
                { key: 'gen_ai.operation.name', value: { stringValue: s.op } },
                ...(s.op === 'execute_tool' ? [{ key: 'gen_ai.tool.name', value: { stringValue: 'files-read' } }] : []),
                ...(s.error === true ? [{ key: 'error.type', value: { stringValue: 'FileNotFoundError' } }] : []),
              ],
              status: { code: s.error === true ? 2 : 0 },
            })),
          },
        ],
      },
    ],
  });
}

describe('replay names what a GenAI capture lacks', () => {
  const main = new URL('../dist/bin/repeated-tool-failure-guard.js', import.meta.url).pathname;
  const dir = mkdtempSync(join(tmpdir(), 'rtfg-coverage-'));

  it('Semantic Kernel default: 10 failing execute_tool spans, no model call: never a warning, the switch named', () => {
    const file = join(dir, 'sk.otlp.jsonl');
    writeFileSync(file, `${otlpLine([{ name: 'invoke_agent sk', op: 'invoke_agent' }, ...Array.from({ length: 10 }, () => ({ name: 'execute_tool files-read', op: 'execute_tool', parent: 0, error: true }))])}\n`);
    const r = spawnSync(process.execPath, [main, 'replay', file], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stdout).not.toMatch(/would_warn {2}/);
    expect(r.stdout + r.stderr).toContain('no model-call spans: 10 `execute_tool` span(s)');
    expect(r.stdout + r.stderr).toContain('SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS=true');
    expect(r.stdout + r.stderr).toContain('Microsoft.SemanticKernel.Experimental.GenAI.EnableOTelDiagnostics');
  });

  it('crewAI + OpenLLMetry: runs and model calls, no tool span: says so by name (exit 3), not "no tool call in it"', () => {
    const file = join(dir, 'crew.otlp.jsonl');
    writeFileSync(file, `${otlpLine([{ name: 'invoke_agent crew', op: 'invoke_agent' }, { name: 'chat gpt', op: 'chat', parent: 0 }, { name: 'chat gpt', op: 'chat', parent: 0 }])}\n`);
    const r = spawnSync(process.execPath, [main, 'replay', file], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('no tool call spans: 1 agent run(s) and 2 model call(s), but no `execute_tool` span');
    expect(r.stderr).not.toContain('with no tool call in it');
  });
});
