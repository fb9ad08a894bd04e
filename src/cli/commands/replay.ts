/**
 * `replay <file...>`: the main job. Replays recorded telemetry through the guard and prints the
 * decision timeline, a summary, the optional in-tree comparison and the Phase 1 invariants.
 */
import { genAiCoverage, genAiCoverageNotes } from '../../profiles/genai/coverage.js';
import { GENAI_DIALECT } from '../../profiles/genai/genai-profile.js';
import type { GenAiDialect } from '../../profiles/genai/genai-profile.js';
import { OPENINFERENCE_DIALECT } from '../../profiles/openinference/openinference-dialect.js';
import { AI_SDK_DIALECT } from '../../profiles/ai-sdk/ai-sdk-dialect.js';
import type { UntypedFailurePolicy } from '../../core/failure/reducer.js';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import type { WireProfileName } from '../../profiles/registry.js';
import { auditInvariants } from '../../replay/audit.js';
import { compareWithInTree } from '../../replay/compare.js';
import { parseReplayInput } from '../../replay/replay-input.js';
import { decompressTelemetry, expandTelemetryPaths, MAX_DECOMPRESSED_BYTES, telemetryFileSource } from '../../replay/input-files.js';
import type { LazyTelemetrySource, ProjectedRecordBatch, TelemetrySource } from '../../replay/replay-input.js';
import { replayRecords } from '../../replay/replay.js';
import type { ReplayResult } from '../../replay/replay.js';
import { WIRE_PROFILES } from '../../profiles/registry.js';
import { describeUnreadProducers, supportedAgents } from '../../profiles/router/routing-profile.js';
import { emptyReportInputs } from '../../profiles/report-inputs.js';
import { TelemetryParseError } from '../../otlp/telemetry-file.js';
import type { TruncatedEnd } from '../../otlp/telemetry-file.js';
import type { GuardMode } from '../../core/failure/types.js';
import { UserError } from '../io.js';
import type { CommandIo } from '../io.js';
import { renderReportFromParts } from '../../report/report.js';
import { checkReportWritable, readPriceTable, reportCharts, writeReportFile } from './report-file.js';
import {
  decisionLine,
  renderComparison,
  renderBlindSpots,
  renderInvariants,
  renderRepetition,
  renderSummary,
  renderTimeline,
  repetitionLine,
  summarise,
  unjudgedLine,
} from '../../report/text.js';

/** Options of {@link runReplay}. */
export interface ReplayCommandOptions {
  readonly mode?: GuardMode;
  /** A profile name, or `auto` (detected from the input). */
  readonly profile: WireProfileName | 'auto';
  readonly format: 'text' | 'json';
  readonly compare: boolean;
  /** Write the HTML shadow report to this file (needs the optional `echarts` package). */
  readonly report?: string;
  /** A price table for requests whose telemetry states no cost (docs/report.md). */
  readonly prices?: string;
  /** The attribute naming a prompt's owner (the gate's resampling unit). @defaultValue `user.id` */
  readonly ownerAttribute?: string;
  /** The attribute stating the mode a prompt ran under. @defaultValue `repeated_tool_failure_guard.mode` */
  readonly cohortAttribute?: string;
  /** `--untyped-failures`: the design's `ineligible` (default) or the opt-in `key-by-tool`. */
  readonly untypedFailures?: UntypedFailurePolicy;
}

/**
 * Exit codes of `replay`. Source of truth for the exit-code table of docs/reference.md (Replay).
 *
 * - `0`: every batch judged, invariants held (and, with `--compare`, agreement);
 * - `1`: a violated invariant, or a disagreement with `--compare`;
 * - `2`: a usage error or unreadable input (set by the CLI);
 * - `3`: some batches could not be judged for lack of input (no terminal record of any call: the
 *   logs of a split collector output were not given), or the input held telemetry but no tool
 *   batch for the profile, or (with `auto`) records of a producer no profile reads, or a file's
 *   last object was cut short (half-written: everything before it was replayed, and the cut is
 *   named on stderr);
 * - `70`: an internal error (set by the CLI).
 */
export const REPLAY_EXIT = { ok: 0, violation: 1, usage: 2, cannotJudge: 3, internal: 70 } as const;

/**
 * Read one input, a file path or `-` for standard input, as bytes: the reader decodes one JSON
 * object at a time, so no string of the whole file is built.
 */
async function readInput(file: string, io: CommandIo): Promise<Buffer> {
  const tooLarge = (name: string): UserError => new UserError(`${name}: larger than ${MAX_INPUT_BYTES} bytes, the most replay reads of one input`);
  const readStream = async (stream: AsyncIterable<unknown>, name: string): Promise<Buffer> => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of stream) {
      const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      size += b.length;
      if (size > MAX_INPUT_BYTES) throw tooLarge(name);
      chunks.push(b);
    }
    return Buffer.concat(chunks, size);
  };
  if (file === '-') return readStream(io.stdin ?? process.stdin, '<stdin>');
  try {
    // A device (/dev/zero, /dev/urandom) never ends: only files and pipes are read, within the bound.
    const st = await stat(file);
    if (st.isFIFO() || st.isSocket()) return await readStream(createReadStream(file), file);
    if (!st.isFile()) throw new UserError(`${file}: not a file or a pipe (${st.isDirectory() ? 'a directory' : 'a device'}); replay reads telemetry files`);
    if (st.size > MAX_INPUT_BYTES) throw tooLarge(file);
    return await readFile(file);
  } catch (err) {
    if (err instanceof UserError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(`${file}: cannot read (${code ?? (err as Error).message})`);
  }
}

/** The most bytes of one input `replay` reads (it holds an input whole; Node's largest file read). */
const MAX_INPUT_BYTES = 2 ** 31 - 1;

/** The code of decompression refused past its bound (`decompressTelemetry`). */
const TOO_LARGE = 'ERR_BUFFER_TOO_LARGE';
const decompressedTooLarge = (name: string): UserError => new UserError(`${name}: decompresses to more than ${MAX_DECOMPRESSED_BYTES} bytes, the most replay reads of one input`);

/** Bytes decompressed when they are gzip or zstd; corrupt data is a user error naming the input. */
function decompressOrUserError(bytes: Buffer, name: string): Buffer {
  const label = name === '-' ? '<stdin>' : name;
  try {
    return decompressTelemetry(bytes);
  } catch (err) {
    throw (err as NodeJS.ErrnoException).code === TOO_LARGE ? decompressedTooLarge(label) : new UserError(`${label}: cannot read (corrupt compressed data)`);
  }
}

/** A file read and decompressed when the reader reaches it; read errors are user errors. */
function lazySource(path: string): LazyTelemetrySource {
  const source = telemetryFileSource(path);
  return {
    file: path,
    load: () => {
      try {
        return source.load();
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        throw code === TOO_LARGE ? decompressedTooLarge(path) : new UserError(`${path}: cannot read (${code ?? 'corrupt compressed data'})`);
      }
    },
  };
}

/**
 * Run `replay`. Resolves to the exit code (see {@link REPLAY_EXIT}). Throws {@link UserError} for
 * unreadable or malformed input.
 */
export async function runReplay(files: readonly string[], options: ReplayCommandOptions, io: CommandIo): Promise<number> {
  // Fail before the work when --report cannot be honoured.
  const charts = options.report === undefined ? undefined : await reportCharts();
  if (options.report !== undefined) await checkReportWritable(options.report);
  const prices = options.prices === undefined ? undefined : await readPriceTable(options.prices);
  const reportInputsOptions = {
    ...(options.ownerAttribute === undefined ? {} : { ownerAttribute: options.ownerAttribute }),
    ...(options.cohortAttribute === undefined ? {} : { cohortAttribute: options.cohortAttribute }),
  };
  if (files.filter((f) => f === '-').length > 1) throw new UserError('standard input (-) can be given only once');
  // Directories stand for their telemetry files; regular files are read (and gzip or zstd
  // decompressed) one at a time, when the reader reaches them; pipes, devices and standard input
  // through readInput and its bounds.
  const sources: (TelemetrySource | LazyTelemetrySource)[] = [];
  for (const file of files) {
    const st = file === '-' ? undefined : await stat(file).catch(() => undefined);
    if (st?.isDirectory() === true) {
      let expanded: string[];
      try {
        expanded = expandTelemetryPaths([file]);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        throw new UserError(code === undefined ? (err as Error).message : `${file}: cannot read (${code})`);
      }
      for (const path of expanded) sources.push(lazySource(path));
    } else if (st?.isFile() === true && st.size <= MAX_INPUT_BYTES) {
      sources.push(lazySource(file));
    } else {
      const bytes = await readInput(file, io);
      sources.push({ text: decompressOrUserError(bytes, file), file: file === '-' ? '<stdin>' : file });
    }
  }
  // Every object is parsed and checked; only what the profile reads is kept (parseReplayInput).
  let records: ProjectedRecordBatch;
  const cuts = new Map<string, TruncatedEnd>();
  try {
    records = parseReplayInput(sources, {
      profile: options.profile,
      reportInputs: options.report !== undefined,
      reportInputsOptions,
      onTruncatedEnd: (cut) => cuts.set(cut.file, cut),
    });
  } catch (err) {
    if (err instanceof TelemetryParseError) throw new UserError(err.message);
    throw err;
  }
  sources.length = 0;
  let progressShown = false;
  const result = await replayRecords(records, {
    mode: options.mode,
    profile: options.profile,
    untypedFailures: options.untypedFailures,
    onProgress:
      io.progress === undefined
        ? undefined
        : (done, total) => {
            progressShown = true;
            io.progress?.(`replay: ${done}/${total} records`);
          },
  });
  if (progressShown) io.progress?.('\n');
  const invariants = auditInvariants(result.decisions, result.emitted, records.whole.identifiers, result.namespaces ?? result.namespace, result.notCheckable, options.untypedFailures);
  const comparison = options.compare ? compareWithInTree(result.decisions, result.inTree) : undefined;
  const summary = summarise(result.decisions, options.untypedFailures);
  // A conventions producer missing one of the span kinds the profile needs, said by name.
  const coverage = coverageNotes(result, records.spans);
  const report: string[] = [
    ...(options.profile === 'auto' ? renderProfiles(result) : []),
    ...renderSummary(summary, result.spanCount, result.logCount, result.unjudgedBatches, result.evictions, result.clockAnomalies),
    ...renderBlindSpots(result.blindSpots),
    ...(result.decisions.length > 0 ? coverage : []),
    ...renderRepetition(result.repetition),
    ...(comparison === undefined ? [] : renderComparison(comparison)),
    ...renderInvariants(invariants),
  ];
  if (options.format === 'json') {
    for (const d of result.decisions) if (d.outcome.decision !== 'none') io.out(JSON.stringify(decisionLine(d)));
    for (const u of result.unjudgedBatches) io.out(JSON.stringify(unjudgedLine(u)));
    for (const r of result.repetition) io.out(JSON.stringify(repetitionLine(r)));
    for (const line of report) io.err(line);
  } else {
    for (const line of renderTimeline(result.decisions)) io.out(line);
    for (const line of report) io.out(line);
  }
  if (options.report !== undefined) {
    // The report's inputs were read from the whole records (renderReport would read the kept ones).
    const inputs = records.whole.reportInputs ?? emptyReportInputs();
    const unreadRecords = records.whole.unread.reduce((sum, u) => sum + u.records, 0);
    const { html } = await renderReportFromParts(result, inputs, records.whole.identifiers, { charts, profile: result.profile, unreadRecords, ...(prices === undefined ? {} : { prices }) });
    await writeReportFile(options.report, html, io);
  }
  const cannotJudge = [
    ...explainUnread(result),
    ...(result.decisions.length === 0 && coverage.length > 0 ? coverage : explainCannotJudge(result, options.profile)),
    ...[...cuts.values()].map(
      (c) => `${c.file}:${c.line}:${c.column}: the last object is cut short (${c.length} bytes of a half-written object); everything before it was replayed`,
    ),
  ];
  for (const line of cannotJudge) io.err(line);
  const disagree = comparison !== undefined && comparison.agreeing !== comparison.total;
  const violated = invariants.some((i) => !i.held);
  if (disagree || violated) return REPLAY_EXIT.violation;
  return cannotJudge.length > 0 ? REPLAY_EXIT.cannotJudge : REPLAY_EXIT.ok;
}

/**
 * Which profiles read the input (with `auto`): "detected" only when one was, and with several,
 * prompts and batches judged by each.
 */
function renderProfiles(result: ReplayResult): string[] {
  if (result.profiles.length === 0) return ['profile: none detected'];
  if (result.profiles.length === 1 && result.unread.length === 0) return [`profile: ${result.profile} (detected)`];
  return [
    `profiles: ${result.profiles.join(', ')} (detected per producer)`,
    ...result.agents.map((a) => `  ${a.profile}: ${a.prompts} prompt(s), ${a.batches} batch(es) judged`),
  ];
}

/** The dialect and tool-span name of each conventions profile, for {@link coverageNotes}. */
const CONVENTION_DIALECTS: Partial<Record<WireProfileName, readonly [GenAiDialect, string]>> = {
  genai: [GENAI_DIALECT, '`execute_tool`'],
  openinference: [OPENINFERENCE_DIALECT, 'OpenInference `TOOL`'],
  'ai-sdk': [AI_SDK_DIALECT, '`ai.toolCall`'],
};

/**
 * What a conventions producer's capture lacks (no tool-call spans, or no model-call spans), when
 * one conventions profile read the whole input (another agent's spans may carry GenAI names).
 */
function coverageNotes(result: ReplayResult, spans: readonly { readonly name: string; readonly attributes: Readonly<Record<string, unknown>> }[]): string[] {
  if (result.profiles.length !== 1) return [];
  const entry = CONVENTION_DIALECTS[result.profile];
  return entry === undefined ? [] : genAiCoverageNotes(genAiCoverage(spans, entry[0]), entry[1]);
}

/** Telemetry no profile read, named by producer (service and scope names, never values). */
function explainUnread(result: ReplayResult): string[] {
  if (result.unread.length === 0) return [];
  return [
    `records no profile read (not judged), by producer:`,
    ...describeUnreadProducers(result.unread).map((l) => `  ${l}`),
    `  Supported agents: ${supportedAgents()} (docs/adding-an-agent.md).`,
  ];
}

/** Why batches could not be judged, for stderr; empty when everything found was judged. */
function explainCannotJudge(result: ReplayResult, requested: WireProfileName | 'auto'): string[] {
  const blind = result.unjudgedBatches.filter((u) => u.reason === 'no_terminal_records');
  const terminal = WIRE_PROFILES[result.profile].terminalRecord;
  if (blind.length > 0) {
    const other = terminal.signal === 'logs' ? 'logs' : 'traces';
    return [
      `cannot judge ${blind.length} batch(es) of ${new Set(blind.map((u) => u.promptId)).size} prompt(s): no ${terminal.description} seen for their calls.`,
      `  The outcome of each call is in its ${terminal.description}; replay the ${other} file too (a collector that writes one file per signal splits them).`,
    ];
  }
  // Nothing recognised: `explainUnread` said what was there.
  if (requested === 'auto' && result.profiles.length === 0) return [];
  if (result.decisions.length === 0 && result.unjudgedBatches.length === 0 && result.spanCount + result.logCount > 0) {
    const suggestion = result.detectedProfiles.find((p) => p !== result.profile);
    const looks =
      result.detectedProfiles.length === 0
        ? 'it does not look like any built-in profile'
        : suggestion === undefined
          ? `it is ${result.profile} telemetry with no tool call in it`
          : `it looks like ${result.detectedProfiles.join(', ')}`;
    return [
      `no tool batch found for profile ${result.profile} in ${result.spanCount} span(s) and ${result.logCount} log record(s): ${looks}.`,
      ...(suggestion !== undefined && requested !== 'auto' ? [`  Try --profile ${suggestion}.`] : []),
    ];
  }
  return [];
}
