/**
 * The shadow report end to end: replayed decisions + the agent's telemetry → audited data → HTML.
 */
import { auditInvariants, inputIdentifiers } from '../replay/audit.js';
import type { InputIdentifiers } from '../replay/audit.js';
import type { RecordBatch } from '../otlp/records.js';
import type { ReplayResult } from '../replay/replay.js';
import { auditReportData } from './audit.js';
import { loadChartRenderer } from './charts.js';
import type { ChartRenderer } from './charts.js';
import { renderReportHtml } from './html.js';
import { mergeReportInputs, readReportInputs } from '../profiles/report-inputs.js';
import type { ReportInputs, ReportInputsOptions } from '../profiles/report-inputs.js';
import { detectWireProfiles, WIRE_PROFILES } from '../profiles/registry.js';
import type { WireProfileDefinition, WireProfileName } from '../profiles/registry.js';
import { sampleTelemetry } from '../profiles/detect.js';
import { resourceKey } from '../profiles/router/producer-recognizer.js';
import type { ResourceView } from '../profiles/wire-profile.js';
import type { RecordedLog, RecordedSpan } from '../otlp/records.js';
import { buildReportData } from './report-data.js';
import type { BuildReportOptions, ReportData } from './report-data.js';

/** Options of {@link renderReport}. */
export interface RenderReportOptions extends BuildReportOptions {
  /** The owner and cohort attributes the report's inputs read. */
  readonly reportInputs?: ReportInputsOptions;
  /** Chart renderer; {@link loadChartRenderer} (the optional `echarts` package) when absent. */
  readonly charts?: ChartRenderer;
}

/** A report whose data failed the structural privacy audit; it is never written. */
export class ReportPrivacyError extends Error {
  override readonly name = 'ReportPrivacyError';
  /** Data-free problem lines (field paths). */
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`the report's data failed the privacy audit: ${problems.slice(0, 5).join('; ')}`);
    this.problems = problems;
  }
}

/** Profile-level definitions the report reads. */
function readerOf(profile: string): WireProfileDefinition['readReportInputs'] {
  return (WIRE_PROFILES as Readonly<Record<string, WireProfileDefinition>>)[profile]?.readReportInputs;
}

/**
 * Every agent's report inputs from whole records: with one profile in use it reads them all; with
 * several, each producer's (Resource's) records go to the first of them that recognises it.
 */
function readAllReportInputs(records: RecordBatch, profiles: readonly WireProfileName[], options: ReportInputsOptions | undefined): ReportInputs {
  if (profiles.length <= 1) {
    const agent = profiles[0] ?? 'qwen-code';
    return mergeReportInputs([{ agent, inputs: readReportInputs(readerOf(agent), records, options) }]);
  }
  const byProducer = new Map<string, { spans: RecordedSpan[]; logs: RecordedLog[] }>();
  const of = (r: ResourceView | undefined): { spans: RecordedSpan[]; logs: RecordedLog[] } => {
    const key = resourceKey(r);
    let g = byProducer.get(key);
    if (g === undefined) byProducer.set(key, (g = { spans: [], logs: [] }));
    return g;
  };
  for (const s of records.spans) of(s.resource).spans.push(s);
  for (const l of records.logs) of(l.resource).logs.push(l);
  const byAgent = new Map<WireProfileName, { spans: RecordedSpan[]; logs: RecordedLog[] }>();
  for (const g of byProducer.values()) {
    const agent = detectWireProfiles(sampleTelemetry(g.spans, g.logs)).find((p) => profiles.includes(p));
    if (agent === undefined) continue;
    const all = byAgent.get(agent) ?? { spans: [], logs: [] };
    all.spans.push(...g.spans);
    all.logs.push(...g.logs);
    byAgent.set(agent, all);
  }
  return mergeReportInputs([...byAgent].map(([agent, r]) => ({ agent, inputs: readReportInputs(readerOf(agent), r, options) })));
}

/**
 * Build and render the shadow report from its parts (what `serve` has at hand: its decisions,
 * the inputs its collector gathered and the ids it saw).
 *
 * @param result - the guard's decisions and emitted telemetry
 * @param inputs - usage, calls and prompt extents ({@link ReportInputsCollector})
 * @param ids - the prompt and session ids of the input
 * @throws {ReportDependencyError} when no renderer is given and `echarts` is not installed
 * @throws {ReportPrivacyError} when the data holds a value outside what guard telemetry may hold
 */
export async function renderReportFromParts(
  result: ReplayResult,
  inputs: ReportInputs,
  ids: InputIdentifiers,
  options: RenderReportOptions = {},
): Promise<{ html: string; data: ReportData }> {
  const charts = options.charts ?? (await loadChartRenderer());
  const invariants = auditInvariants(result.decisions, result.emitted, ids, result.namespaces ?? result.namespace, result.notCheckable, result.untypedFailures);
  const data = buildReportData(result, inputs, invariants, { ...options, profile: options.profile ?? 'qwen-code' });
  const problems = auditReportData(data, ids, new Set(invariants.map((i) => i.description)));
  if (problems.length > 0) throw new ReportPrivacyError(problems);
  return { html: renderReportHtml(data, charts), data };
}

/**
 * Build and render the shadow report of one replay.
 *
 * @param records - the telemetry that was replayed (read again for usage, calls and prompt extents)
 * @param result - the replay of `records`
 * @returns the HTML page and the data it shows
 * @throws {ReportDependencyError} when no renderer is given and `echarts` is not installed
 * @throws {ReportPrivacyError} when the data holds a value outside what guard telemetry may hold
 */
export async function renderReport(records: RecordBatch, result: ReplayResult, options: RenderReportOptions = {}): Promise<{ html: string; data: ReportData }> {
  const inputs = readAllReportInputs(records, result.profiles.length === 0 ? [result.profile] : result.profiles, options.reportInputs);
  return renderReportFromParts(result, inputs, inputIdentifiers(records), options);
}
