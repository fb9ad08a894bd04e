/**
 * The shadow report end to end: replayed decisions + the agent's telemetry → audited data → HTML.
 */
import { auditInvariants, inputIdentifiers } from '../replay/audit.js';
import type { RecordBatch } from '../otlp/records.js';
import type { ReplayResult } from '../replay/replay.js';
import { auditReportData } from './audit.js';
import { loadChartRenderer } from './charts.js';
import type { ChartRenderer } from './charts.js';
import { renderReportHtml } from './html.js';
import { emptyReportInputs } from '../profiles/report-inputs.js';
import { WIRE_PROFILES } from '../profiles/registry.js';
import type { WireProfileDefinition } from '../profiles/registry.js';
import { buildReportData } from './report-data.js';
import type { BuildReportOptions, ReportData } from './report-data.js';

/** Options of {@link renderReport}. */
export interface RenderReportOptions extends BuildReportOptions {
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
  const profile = options.profile ?? 'qwen-code';
  const charts = options.charts ?? (await loadChartRenderer());
  const ids = inputIdentifiers(records);
  const invariants = auditInvariants(result.decisions, result.emitted, ids);
  const definition: WireProfileDefinition | undefined = (WIRE_PROFILES as Readonly<Record<string, WireProfileDefinition>>)[profile];
  const inputs = (definition?.readReportInputs ?? emptyReportInputs)(records);
  const data = buildReportData(result, inputs, invariants, { ...options, profile });
  const problems = auditReportData(data, ids, new Set(invariants.map((i) => i.description)));
  if (problems.length > 0) throw new ReportPrivacyError(problems);
  return { html: renderReportHtml(data, charts), data };
}
