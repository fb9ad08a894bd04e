/**
 * The built-in wire profiles by name: how the guard facade, `replay` and `serve` find a profile.
 * Adding an agent means adding its folder under `profiles/` and one entry here.
 */
import { CLAUDE_CODE_FAILURE_CLASSES } from './claude-code/failure-class.js';
import { CLAUDE_CODE_READS } from './claude-code/reads.js';
import type { FailureEngine } from '../engine/failure-engine.js';
import type { RepetitionEngine } from '../engine/repetition-engine.js';
import { BatchSpanProfile, DEFAULT_BATCH_SPAN_NAME } from './batch-span/batch-span-profile.js';
import { CLAUDE_CODE_SCOPE_PREFIX, CLAUDE_CODE_SERVICE_NAME, ClaudeCodeProfile } from './claude-code/claude-code-profile.js';
import { recognises } from './detect.js';
import type { TelemetrySample, WireProfileRecognition } from './detect.js';
import { batchSpanReads } from './batch-span/batch-span-profile.js';
import { QWEN_CODE_READS } from './qwen-code/reads.js';
import type { BatchSpanProfileOptions } from './batch-span/batch-span-profile.js';
import { GenAiProfile } from './genai/genai-profile.js';
import { AI_SDK_DIALECT, AI_SDK_READS } from './ai-sdk/ai-sdk-dialect.js';
import { GENAI_ERROR_TYPES } from './genai/error-types.js';
import { GENAI_RECOGNITION } from './genai/detect.js';
import { OPENINFERENCE_DIALECT, OPENINFERENCE_READS, OPENINFERENCE_RECOGNITION } from './openinference/openinference-dialect.js';
import { QwenCodeProfile } from './qwen-code/qwen-code-profile.js';
import { QwenCodeReportInputsCollector } from './qwen-code/report-inputs.js';
import { ClaudeCodeReportInputsCollector } from './claude-code/report-inputs.js';
import { GeminiCliReportInputsCollector } from './gemini-cli/report-inputs.js';
import { AI_SDK_USAGE_KEYS, GenAiReportInputsCollector } from './genai/report-inputs.js';
import { GENAI_DIALECT } from './genai/genai-profile.js';
import type { ReportInputsReader } from './report-inputs.js';
import type { NotCheckableInvariants, WireProfile, WireProfileReads } from './wire-profile.js';
import { CLAUDE_CODE_BLIND_SPOTS, CLAUDE_CODE_NOT_CHECKABLE } from './claude-code/blind-spots.js';
import { QWEN_CODE_TOOL_ERROR_TYPES } from './qwen-code/tool-error-types.js';
import { GeminiCliProfile } from './gemini-cli/gemini-cli-profile.js';
import { GEMINI_CLI_READS } from './gemini-cli/reads.js';
import { GEMINI_CLI_EVENT_PREFIX, GEMINI_CLI_SERVICE_NAME } from './gemini-cli/semconv.js';
import { GEMINI_CLI_TOOL_ERROR_TYPES } from './gemini-cli/tool-error-types.js';
import { CODEX_BLIND_SPOTS, CODEX_NOT_CHECKABLE } from './codex/blind-spots.js';
import { CODEX_EVENT_PREFIX, CODEX_SCOPE_PREFIX, CODEX_SERVICE_NAMES, CodexProfile } from './codex/codex-profile.js';
import { CODEX_FAILURE_CLASSES } from './codex/failure-class.js';
import { CODEX_READS } from './codex/reads.js';

/** Per-profile options, each read only by its profile. */
export interface WireProfileOptions {
  /** Options of the `batch-span` profile. */
  readonly batchSpan?: BatchSpanProfileOptions;
}

/** One built-in profile. */
export interface WireProfileDefinition {
  /** Namespace of the guard's emitted names when the user sets none (the agent's own prefix). */
  readonly defaultNamespace: string;
  /**
   * What carries a call's terminal outcome on this wire, for messages when none arrives (e.g.
   * "`qwen-code.tool_call` log records"), and which signal it is in.
   */
  readonly terminalRecord: { readonly description: string; readonly signal: 'logs' | 'traces' };
  /**
   * How the agent's telemetry is recognised, from the producer's own names (service, scope, span,
   * event; see {@link WireProfileRecognition}). `auto` routes each producer's records (per
   * Resource) to the first profile, in registry order, that recognises it; a `fallback` profile
   * reads only producers no other profile recognises.
   */
  readonly recognise: WireProfileRecognition;
  /**
   * The closed vocabulary of execution error types the agent writes (the failure key's second
   * half). Any other value is emitted as `other` (the reducer keys it on an in-memory digest).
   */
  readonly executionErrorTypes: readonly string[];
  /**
   * What the profile reads with these options (see {@link WireProfileReads}); `serve` keeps only
   * that at ingest. Absent: everything is kept.
   */
  readonly reads?: (options: WireProfileOptions) => WireProfileReads;
  /** Build the profile bound to both engines. May throw; the facade catches. */
  create(engine: FailureEngine, repetition: RepetitionEngine, options: WireProfileOptions): WireProfile;
  /**
   * Collects the shadow report's usage (requests, tokens, cost where the agent states it), calls and
   * prompt extents from this wire; absent: the report shows the agent's usage as not known. A new
   * agent (Codex, ...) adds its reader here, beside its profile.
   */
  readonly readReportInputs?: ReportInputsReader;
  /** What this wire cannot show the guard (fixed sentences `replay` and the report print); absent: nothing known. */
  readonly blindSpots?: readonly string[];
  /** The Phase 1 invariants this wire cannot show a violation of; absent: all are checkable. */
  readonly notCheckable?: NotCheckableInvariants;
}

/**
 * The built-in profiles, in precedence order (what `auto` tries first; docs/adding-an-agent.md):
 *
 * - `batch-span`: the design's explicit batch span (`runToolCalls`);
 * - `qwen-code`: the real qwen-code 0.24.4 wire (wire reference);
 * - `claude-code`: Claude Code 2.1.328's logs (and beta spans when present), batches by `request_id`;
 * - `gemini-cli`: gemini-cli 0.61.0's logs, batches by the `schedule_tool_calls` span on each
 *   `tool_call` log (docs/gemini-cli.md);
 * - `codex`: OpenAI Codex CLI 0.169.0's logs (and `mcp.tools.call` spans when exported), batches
 *   per model request (`codex.api_request`; docs/codex.md);
 * - `openinference`: Arize's OpenInference conventions (`openinference.span.kind` AGENT / LLM /
 *   TOOL, `tool.name`), read by the `genai` profile's rules under those names (docs/openinference.md);
 * - `genai`: any agent that follows the OpenTelemetry GenAI semantic conventions (`invoke_agent`,
 *   model-call and `execute_tool` spans; docs/genai.md); AI SDK 7 with `@ai-sdk/otel` among them;
 * - `ai-sdk`: the Vercel AI SDK's own `ai.*` spans (AI SDK 6, `LegacyOpenTelemetry`, opencode),
 *   read by the `genai` profile's rules under the SDK's names (docs/ai-sdk.md).
 */
export const WIRE_PROFILES = {
  'batch-span': {
    defaultNamespace: 'qwen-code',
    terminalRecord: { description: 'ended tool spans under the batch span', signal: 'traces' },
    // Before qwen-code: the design's batch span may come from a qwen-code build that writes it.
    recognise: { spanNames: [DEFAULT_BATCH_SPAN_NAME] },
    // The design's batch span carries the same ToolErrorType values.
    executionErrorTypes: QWEN_CODE_TOOL_ERROR_TYPES,
    reads: (options) => batchSpanReads(options.batchSpan),
    create: (engine, _repetition, options) => new BatchSpanProfile(engine, options.batchSpan),
  },
  'qwen-code': {
    defaultNamespace: 'qwen-code',
    terminalRecord: { description: '`qwen-code.tool_call` log records', signal: 'logs' },
    recognise: { serviceNames: ['qwen-code'], spanNamePrefixes: ['qwen-code.'], eventNamePrefixes: ['qwen-code.'] },
    executionErrorTypes: QWEN_CODE_TOOL_ERROR_TYPES,
    reads: () => QWEN_CODE_READS,
    create: (engine, repetition) => new QwenCodeProfile(engine, repetition),
    readReportInputs: (options) => new QwenCodeReportInputsCollector(options),
  },
  'claude-code': {
    defaultNamespace: 'claude-code',
    terminalRecord: { description: '`claude_code.tool_result` log records', signal: 'logs' },
    recognise: { serviceNames: [CLAUDE_CODE_SERVICE_NAME], scopeNamePrefixes: [CLAUDE_CODE_SCOPE_PREFIX] },
    // The profile maps Claude Code's open-ended error classes onto this closed set itself.
    executionErrorTypes: CLAUDE_CODE_FAILURE_CLASSES,
    reads: () => CLAUDE_CODE_READS,
    create: (engine) => new ClaudeCodeProfile(engine),
    readReportInputs: (options) => new ClaudeCodeReportInputsCollector(options),
    blindSpots: CLAUDE_CODE_BLIND_SPOTS,
    notCheckable: CLAUDE_CODE_NOT_CHECKABLE,
  },
  'gemini-cli': {
    defaultNamespace: 'gemini-cli',
    terminalRecord: { description: '`gemini_cli.tool_call` log records', signal: 'logs' },
    recognise: { serviceNames: [GEMINI_CLI_SERVICE_NAME], scopeNames: [GEMINI_CLI_SERVICE_NAME], eventNamePrefixes: [GEMINI_CLI_EVENT_PREFIX] },
    executionErrorTypes: GEMINI_CLI_TOOL_ERROR_TYPES,
    reads: () => GEMINI_CLI_READS,
    create: (engine, repetition) => new GeminiCliProfile(engine, repetition),
    readReportInputs: (options) => new GeminiCliReportInputsCollector(options),
  },
  codex: {
    defaultNamespace: 'codex',
    terminalRecord: { description: '`codex.tool_result` log records', signal: 'logs' },
    // Codex's Resource `service.name` is its originator; its log scopes are `codex_otel.*`, its events `codex.*`.
    recognise: { serviceNames: CODEX_SERVICE_NAMES, scopeNamePrefixes: [CODEX_SCOPE_PREFIX], eventNamePrefixes: [CODEX_EVENT_PREFIX] },
    // Only structured signals classify a failure (failure-class.ts); a bare `success: "false"` is untyped.
    executionErrorTypes: CODEX_FAILURE_CLASSES,
    reads: () => CODEX_READS,
    create: (engine) => new CodexProfile(engine),
    blindSpots: CODEX_BLIND_SPOTS,
    notCheckable: CODEX_NOT_CHECKABLE,
  },
  openinference: {
    defaultNamespace: 'agent',
    terminalRecord: { description: 'ended `TOOL` spans (`openinference.span.kind`)', signal: 'traces' },
    recognise: OPENINFERENCE_RECOGNITION,
    // Failures are OpenTelemetry exception events, as in the GenAI conventions: the same raw types.
    executionErrorTypes: GENAI_ERROR_TYPES,
    reads: () => OPENINFERENCE_READS,
    create: (engine, repetition) => new GenAiProfile(engine, repetition, OPENINFERENCE_DIALECT),
  },
  genai: {
    defaultNamespace: 'agent',
    terminalRecord: { description: 'ended `execute_tool` spans', signal: 'traces' },
    // A conventions profile: qwen-code's own spans carry GenAI attributes and its HTTP client spans
    // are named `chat`, so it reads only producers no agent profile recognises.
    recognise: GENAI_RECOGNITION,
    // Allowlisted raw types map to these values; others become private keys, emitted as `other`.
    // No `reads`: span names carry the operation and the model or tool name, so serve keeps all.
    executionErrorTypes: GENAI_ERROR_TYPES,
    create: (engine, repetition) => new GenAiProfile(engine, repetition),
    readReportInputs: (options) => new GenAiReportInputsCollector(options, GENAI_DIALECT),
  },
  'ai-sdk': {
    defaultNamespace: 'agent',
    terminalRecord: { description: 'ended `ai.toolCall` spans', signal: 'traces' },
    recognise: { spanNames: AI_SDK_READS.spanNames ?? [] },
    // The same raw types (an error's `name`) as the GenAI conventions' exception events.
    executionErrorTypes: GENAI_ERROR_TYPES,
    reads: () => AI_SDK_READS,
    create: (engine, repetition) => new GenAiProfile(engine, repetition, AI_SDK_DIALECT),
    readReportInputs: (options) => new GenAiReportInputsCollector(options, AI_SDK_DIALECT, AI_SDK_USAGE_KEYS),
  },
} as const satisfies Readonly<Record<string, WireProfileDefinition>>;

/** Name of a built-in wire profile. */
export type WireProfileName = keyof typeof WIRE_PROFILES;

/** Whether `name` names a built-in profile (exact, case-sensitive). */
export function isWireProfileName(name: unknown): name is WireProfileName {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(WIRE_PROFILES, name);
}

/** Profile names in precedence order: agent profiles in registry order, then `fallback` ones. */
export const WIRE_PROFILE_PRECEDENCE: readonly WireProfileName[] = Object.freeze(
  (Object.keys(WIRE_PROFILES) as WireProfileName[]).sort(
    (a, b) => Number(isFallback(a)) - Number(isFallback(b)),
  ),
);

function isFallback(name: WireProfileName): boolean {
  return (WIRE_PROFILES[name].recognise as WireProfileRecognition).fallback === true;
}

/**
 * The built-in profiles whose wire `sample` looks like, in precedence order
 * ({@link WIRE_PROFILE_PRECEDENCE}): the first one reads the producer under `auto`.
 */
export function detectWireProfiles(sample: TelemetrySample): WireProfileName[] {
  return WIRE_PROFILE_PRECEDENCE.filter((name) => recognises(WIRE_PROFILES[name].recognise, sample));
}

/** The execution error types of every built-in profile (the vocabulary of a guard that routes to them all). */
export const ALL_EXECUTION_ERROR_TYPES: readonly string[] = Object.freeze([
  ...new Set(Object.values(WIRE_PROFILES).flatMap((d: WireProfileDefinition) => d.executionErrorTypes)),
]);
