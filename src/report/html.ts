/**
 * The shadow report as one self-contained HTML page: inline CSS and inline SVG charts, no script,
 * no external stylesheet, font or image, so it opens offline and can be mailed as one file.
 *
 * Pure: the same {@link ReportData} and renderer give the same string. Every value from the data is
 * HTML-escaped; the data itself holds only ids, closed labels, counts and times
 * (see `auditReportData`).
 */
import { outputId } from '../otel/output-id.js';
import { COLORS, countsBarOption, timelineOption, whatIfHeatmapOption } from './charts.js';
import type { ChartRenderer } from './charts.js';
import type { ReportData } from './report-data.js';
import { renderSavingsSection } from './html-savings.js';
import { renderGateSection } from './html-gate.js';
import { renderRankingAndTrend, renderVerdict, reportTitle } from './html-verdict.js';
import { card, counts, duration, e, figure, groupRows, iso, n, table } from './html-kit.js';
import { BREAKER_VARIANTS, FAILURE_VARIANTS } from './what-if.js';
import { WIRE_PROFILES } from '../profiles/registry.js';


const STYLE = `
:root{--text:${COLORS.text};--muted:${COLORS.muted};--line:#dde3e9;--bg:#fbfcfd}
*{box-sizing:border-box}
body{margin:0;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--text);background:var(--bg)}
main{max-width:1120px;margin:0 auto;padding:24px 28px 60px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:36px 0 8px;padding-top:12px;border-top:1px solid var(--line)}
h3{font-size:15px;margin:22px 0 6px}
p{margin:6px 0 10px;max-width:80ch}.muted{color:var(--muted)}
code{font:12px/1.4 ui-monospace,"DejaVu Sans Mono",monospace;background:#eef2f5;padding:1px 4px;border-radius:3px}
nav{margin:10px 0 0;font-size:13px}nav a{margin-right:14px;color:#2b5d9b;text-decoration:none}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}
.card{background:#fff;border:1px solid var(--line);border-radius:6px;padding:10px 14px;min-width:128px}
.card .value{font-size:22px;font-weight:600;font-variant-numeric:tabular-nums}.card .label{font-size:12px;color:var(--muted)}
.card.warn .value{color:#b05d11}.card.stop .value{color:${COLORS.bad}}.card.good .value{color:${COLORS.good}}
table{border-collapse:collapse;margin:8px 0 14px;background:#fff;font-variant-numeric:tabular-nums}
th,td{border:1px solid var(--line);padding:4px 9px;text-align:right;vertical-align:top}
th{background:#f1f4f7;font-weight:600;font-size:12px}
td:first-child,th:first-child{text-align:left}
tr.default td{background:#fff6e0;font-weight:600}
.verdict{background:#fff;border:1px solid var(--line);border-left:4px solid #2b5d9b;border-radius:6px;padding:10px 14px;max-width:none}
.held{color:${COLORS.good};font-weight:600}.violated{color:${COLORS.bad};font-weight:600}.unchecked{font-weight:600}
figure{margin:10px 0 18px;background:#fff;border:1px solid var(--line);border-radius:6px;padding:8px}
figure svg{display:block;max-width:100%;height:auto}
figcaption{font-size:12px;color:var(--muted);margin-top:4px}
.legend span{display:inline-block;margin-right:12px;font-size:12px}
.legend i{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-2px;margin-right:4px}
.grid2{display:grid;grid-template-columns:1fr 1fr;gap:14px}
@media (max-width:800px){.grid2{grid-template-columns:1fr}}
`;

/**
 * Render the report.
 *
 * @param data - the report's data ({@link buildReportData})
 * @param render - the chart renderer ({@link loadChartRenderer})
 * @returns one HTML document
 */
export function renderReportHtml(data: ReportData, render: ChartRenderer): string {
  const s = data.summary;
  const decided = (k: string): number => s.decisions[k] ?? 0;
  const wouldWarn = decided('would_warn') + decided('warned');
  const wouldStop = decided('would_stop') + decided('stopped');
  const parts: string[] = [];
  parts.push(`<header><h1>${e(reportTitle(data.runMode))}</h1>
<p class="muted">Profile <code>${e(data.profile)}</code> · ${n(data.spans)} spans and ${n(data.logs)} log records · ${e(iso(data.firstMillis))} to ${e(iso(data.lastMillis))}</p>
${renderVerdict(data)}
<nav><a href="#summary">Summary</a><a href="#savings">What enforce would have saved</a><a href="#keys">Loop keys and trend</a><a href="#gate">Rollout gate</a><a href="#timelines">Timelines</a><a href="#what-if">Policy what-if</a><a href="#privacy">Privacy</a></nav></header>`);

  // 1. Summary
  const unjudgedTotal = Object.values(s.unjudged).reduce((a, b) => a + b, 0);
  parts.push(`<section id="summary"><h2>Summary</h2>
<div class="cards">${card('sessions', n(s.sessions), 'sessions')}${card('prompts', n(s.prompts), 'prompts')}${card('batches judged', n(s.batches), 'batches')}${card('would warn (reminder)', n(wouldWarn), 'would-warn', 'warn')}${card('would stop', n(wouldStop), 'would-stop', 'stop')}${card('batches not judged', n(unjudgedTotal), 'unjudged')}</div>
<p>Decisions: ${counts(s.decisions)}</p>
<p>Reset reasons: ${counts(s.resetReasons)}</p>
<p>Failed calls with no type, per agent: ${counts(s.untypedFailures)} (by the design <code>unknown</code>: never counted toward a stop, each such batch resets the candidate; the what-if row "failures with no type keyed by tool alone" shows what <code>--untyped-failures key-by-tool</code> would have done).</p>
<p>Batches not judged, by reason: ${counts(s.unjudged)} (<code>turn_cancelled</code>, <code>cancelled_call</code>, <code>other_loop_stop</code>: the turn ended before the guard would run, as in qwen-code; <code>no_terminal_records</code>: the calls' outcome records were not in the input). Prompts evicted before they ended: ${counts(s.evictions)}. Late records: ${n(s.lateRecords)}. Spans ending before they start: ${n(s.clockAnomalies)}.</p>
<p>Identical-call breaker: ${counts(s.repetition)}</p>
<div class="grid2">${Object.keys(s.decisions).length === 0 ? '' : figure(render(countsBarOption('Decisions by kind', s.decisions), 520, 60 + 26 * Object.keys(s.decisions).length), 'Every judged batch by decision (none = no transition).')}${Object.keys(s.resetReasons).length === 0 ? '' : figure(render(countsBarOption('Reset reasons', s.resetReasons), 520, 60 + 26 * Object.keys(s.resetReasons).length), 'Why candidates were dropped.')}</div>
<h3>Per agent (the profile that read each prompt)</h3>${table(['profile', 'prompts', 'batches', 'would warn', 'would stop'], groupRows(s.byProfile).map(([profile, , ...rest]) => [profile ?? '', ...rest]))}
${
  s.unread.length === 0
    ? ''
    : `<h3>Records no profile read, per producer</h3><p>Not judged: their producer is none of the supported agents (${e(Object.keys(WIRE_PROFILES).join(', '))}).</p>${table(
        ['service.name', 'scopes', 'records'],
        s.unread.map((u) => [e(u.serviceName), e(u.scopeNames.join(', ')), n(u.records)]),
      )}`
}
<h3>Per deployment.environment and service.version (from the Resource)</h3>${table(['deployment.environment', 'service.version', 'prompts', 'batches', 'would warn', 'would stop'], groupRows(s.byDeployment))}
${s.byDeployment.some((r) => r.group === '(unset)') ? '<p class="muted">(unset): the Resource has no <code>deployment.environment</code>. The design asks for one before a per-environment conclusion can be drawn.</p>' : ''}
<h3>Phase 1 invariants</h3>${table(
    ['invariant', 'result', 'violations'],
    s.invariants.map((i) => [
      e(i.description),
      !i.held ? '<span class="violated">VIOLATED</span>' : i.notCheckable === undefined ? '<span class="held">held</span>' : `<span class="unchecked">not checkable</span>: ${e(i.notCheckable)}`,
      n(i.violations),
    ]),
  )}${data.blindSpots.length === 0 ? '' : `<h3>What this telemetry cannot show</h3><ul class="blind-spots">${data.blindSpots.map((b) => `<li>${e(b)}</li>`).join('')}</ul>`}</section>`);

  // 2. Savings
  parts.push(renderSavingsSection(data, render));
  parts.push(renderRankingAndTrend(data));
  parts.push(renderGateSection(data));

  // 3. Timelines
  const legend = `<p class="legend"><span><i style="background:${COLORS.idle}"></i>idle</span><span><i style="background:${COLORS.tracking}"></i>tracking</span><span><i style="background:${COLORS.warned}"></i>warned</span><span><i style="background:${COLORS.latched}"></i>latched</span><span><i style="background:${COLORS.failure}"></i>eligible failures by key (count)</span><span><i style="background:${COLORS.request}"></i>model response</span><span><i style="background:${COLORS.breaker}"></i>identical-call breaker</span></p>`;
  parts.push(`<section id="timelines"><h2>Per-prompt timelines</h2>
<p>Each batch on a time axis: the failure guard's state as bands, eligible failures per key (a key is a tool and an execution error type; the tool is not named here, <code>K1</code>, <code>K2</code> number the keys of the prompt), decisions as marks, model responses, and the identical-call breaker's decisions alongside.</p>${legend}
${data.timelines
  .map((t) => {
    const h = 150 + 30 * t.keys.length;
    return `<h3 id="prompt-${e(outputId(t.promptId))}">Prompt <code>${e(outputId(t.promptId))}</code> <span class="muted">· ${e(t.mode)} · ${e(t.route)} · ${n(t.batches.length)} batches · ${duration(t.endMillis - t.startMillis)}</span></h3>${figure(
      render(timelineOption(t), 1060, h),
      t.keys.length === 0 ? 'No eligible failures.' : t.keys.map((k, i) => `K${i + 1}: <code>${e(k.executionErrorType)}</code> (${e(k.toolType)})`).join(', '),
    )}`;
  })
  .join('\n')}
${data.timelinesOmitted > 0 ? `<p class="muted">${n(data.timelinesOmitted)} quieter prompts are not drawn.</p>` : ''}</section>`);

  // 4. What-if
  const f = data.whatIf.failure;
  const grid = f.filter((r) => r.variant === undefined);
  const b = data.whatIf.breaker;
  const policyRow = (r: (typeof f)[number]): string[] => [
    r.variant === undefined ? `${r.failureThreshold} failures, ${r.batchThreshold} batch${r.batchThreshold === 1 ? '' : 'es'}${r.isDefault ? ' (design default)' : ''}` : e(FAILURE_VARIANTS[r.variant as keyof typeof FAILURE_VARIANTS] ?? r.variant),
    n(r.reminded),
    n(r.stopped),
    n(r.saved.requests),
    n(r.saved.inputTokens + r.saved.outputTokens),
    n(r.recoveredAfterReminder),
  ];
  parts.push(`<section id="what-if"><h2>Policy what-if</h2>
<p>The same telemetry re-run through the pure reducers with other parameters. The design's parameters (8 eligible failures across at least 2 batches; breaker warn 3, abort 5) stay the runtime default; these runs only evaluate alternatives. False-positive proxy: a reminded prompt whose candidate tool later succeeded in the same prompt without new user input (the model recovered without the reminder); for the breaker, a warned prompt whose identical run ended on its own (another call followed).</p>
<div class="grid2">${figure(render(whatIfHeatmapOption('Prompts stopped', grid.map((r) => ({ failures: r.failureThreshold, batches: r.batchThreshold, value: r.stopped, isDefault: r.isDefault }))), 520, 230), 'Failure guard: prompts stopped per threshold pair (framed: the design default).')}${figure(render(whatIfHeatmapOption('Tokens saved', grid.map((r) => ({ failures: r.failureThreshold, batches: r.batchThreshold, value: r.saved.inputTokens + r.saved.outputTokens, isDefault: r.isDefault }))), 520, 230), 'Failure guard: input + output tokens after the stop point.')}</div>
<h3>Failure guard</h3>${table(['policy', 'prompts reminded', 'prompts stopped', 'requests saved', 'tokens saved', 'false-positive proxy'], f.map(policyRow), f.map((r) => r.isDefault))}
<h3>Identical-call breaker</h3>${table(
    ['policy', 'prompts warned', 'prompts aborted', 'requests saved', 'tokens saved', 'false-positive proxy'],
    b.map((r) => [
      r.variant === undefined ? `warn ${r.warn}, abort ${r.abort}${r.isDefault ? ' (default)' : ''}` : e(BREAKER_VARIANTS[r.variant as keyof typeof BREAKER_VARIANTS] ?? r.variant),
      n(r.reminded),
      n(r.stopped),
      n(r.saved.requests),
      n(r.saved.inputTokens + r.saved.outputTokens),
      n(r.movedOnAfterWarn),
    ]),
    b.map((r) => r.isDefault),
  )}
<p class="muted">The polling variant needs a result fingerprint: <code>gen_ai.tool.call.result</code> (hashed in memory, never written) or the result size. Without either it counts like the default.</p></section>`);

  parts.push(`<section id="privacy"><h2>Privacy</h2><p>This page holds prompt and session ids, closed-vocabulary labels, error types, counts, token sums and times: what the guard's own telemetry may hold. No tool argument, result, path, command, tool name or error text. It loads nothing from the network and runs no script.</p></section>`);

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${e(reportTitle(data.runMode))}</title><style>${STYLE}</style></head>
<body><main>
${parts.join('\n')}
</main></body></html>
`;
}
