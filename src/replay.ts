/**
 * `repeated-tool-failure-guard/replay`: judge recorded telemetry out of process. Read files
 * (qwen-code outfiles, OTLP JSON lines) or OTLP requests into records, replay them through the
 * guard, compare with qwen-code's in-tree guard, audit the invariants, and render the HTML shadow
 * report (its chart library, the optional peer `echarts`, loads only when a report is rendered).
 *
 * @packageDocumentation
 */
export { parseTelemetryText, readTelemetryText, TelemetryParseError } from './otlp/telemetry-file.js';
export type { TelemetryRecordSink } from './otlp/telemetry-file.js';
export { isProjectedRecordBatch, parseReplayInput } from './replay/replay-input.js';
export type { ProjectedRecordBatch, ReplayInputOptions, TelemetrySource, WholeInputFacts } from './replay/replay-input.js';
export { otlpRequestToRecords } from './otlp/otlp.js';
export { decodeOtlpProtobuf } from './otlp/otlp-protobuf.js';
export type { OtlpSignal } from './otlp/otlp.js';
export { emptyRecordBatch, RecordedSpan } from './otlp/records.js';
export type { RecordBatch, RecordedLog } from './otlp/records.js';
export { replayRecords } from './replay/replay.js';
export type { EmittedGuardRecord, ReplayOptions, ReplayResult } from './replay/replay.js';
export { compareWithInTree } from './replay/compare.js';
export type { BatchComparison, ComparedDecision, ComparisonResult } from './replay/compare.js';
export { auditInvariants, inputIdentifiers, sensitiveInputStrings } from './replay/audit.js';
export type { InputIdentifiers, InvariantResult } from './replay/audit.js';
export { inTreeGuardEvents } from './profiles/qwen-code/in-tree.js';
export type { InTreeGuardEvent } from './profiles/qwen-code/in-tree.js';
export { renderReport, renderReportFromParts, ReportPrivacyError } from './report/report.js';
export type { RenderReportOptions } from './report/report.js';
export { loadChartRenderer, ReportDependencyError } from './report/charts.js';
export type { ChartOption, ChartRenderer } from './report/charts.js';
export type { ReportData } from './report/report-data.js';
