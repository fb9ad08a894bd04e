/**
 * The report's "What enforce would have saved" section: per prompt, per agent, per
 * `deployment.environment` and in total, requests, tokens (cache tokens where recorded), money
 * where the telemetry states it or the user's price table gives it, and wall time.
 */
import { outputId } from '../otel/output-id.js';
import { savingsOption } from './charts.js';
import type { ChartRenderer } from './charts.js';
import { card, duration, e, figure, n, quantile, table, usd } from './html-kit.js';
import type { ReportData, SavingsGroupRow } from './report-data.js';
import type { SpendAfter } from './what-if.js';

/** Rows of the per-prompt savings table (largest first); the totals cover every prompt. */
const MAX_SAVINGS_ROWS = 50;

/** Money of a spend: the known sum, and how many requests had no stated cost and no price. */
export function money(s: SpendAfter): string {
  if (s.requests === 0) return usd(0);
  if (s.uncostedRequests === s.requests) return '<span class="muted">not known</span>';
  const parts = [usd(s.costUsd)];
  if (s.pricedRequests > 0) parts.push(`<span class="muted">(${n(s.pricedRequests)} priced)</span>`);
  if (s.uncostedRequests > 0) parts.push(`<span class="muted">+ ${n(s.uncostedRequests)} request${s.uncostedRequests === 1 ? '' : 's'} not known</span>`);
  return parts.join(' ');
}

function cells(s: SpendAfter, withCache: boolean): string[] {
  return [n(s.requests), n(s.inputTokens), n(s.outputTokens), ...(withCache ? [n(s.cacheReadTokens + s.cacheCreationTokens)] : []), money(s), duration(s.wallMillis)];
}

function head(withCache: boolean): string[] {
  return ['requests', 'input tokens', 'output tokens', ...(withCache ? ['cache tokens'] : []), 'money', 'wall time'];
}

function groupTable(label: string, rows: readonly SavingsGroupRow[], withCache: boolean, id: string): string {
  const h = head(withCache);
  return `<table id="${id}"><thead><tr><th rowspan="2">${label}</th><th rowspan="2">prompts reminded</th><th rowspan="2">prompts stopped</th><th colspan="${h.length}">after the reminder</th><th colspan="${h.length}">after the stop</th></tr><tr>${[...h, ...h].map((x) => `<th>${x}</th>`).join('')}</tr></thead><tbody>${rows
    .map((r) => `<tr data-group="${e(r.group)}">${[`<code>${e(r.group)}</code>`, n(r.prompts), n(r.stopped), ...cells(r.afterReminder, withCache), ...cells(r.afterStop, withCache)].map((c) => `<td>${c}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

/**
 * Render the savings section.
 *
 * @param data - the report's data
 * @param render - the chart renderer
 */
export function renderSavingsSection(data: ReportData, render: ChartRenderer): string {
  const sv = data.savings;
  const stopped = sv.prompts.filter((p) => p.stopBatch !== undefined);
  const withCache = sv.totalAfterReminder.cacheReadTokens + sv.totalAfterReminder.cacheCreationTokens > 0;
  const sources =
    sv.usageSources.length === 0
      ? '<span class="muted">none found in the input (token counts show as 0)</span>'
      : sv.usageSources.map((u) => `<code>${e(u.agent)}</code>: <code>${e(u.source)}</code>`).join(', ');
  const unknown =
    sv.agentsWithoutUsage.length === 0
      ? ''
      : `<p id="usage-not-known"><strong>Not known:</strong> the usage of ${sv.agentsWithoutUsage.map((a) => `<code>${e(a)}</code>`).join(', ')}: their telemetry in this input has no model usage record, so their savings show as 0.</p>`;
  const tokens = (p: (typeof stopped)[number]): number => p.afterStop.inputTokens + p.afterStop.outputTokens;
  return `<section id="savings"><h2>What enforce would have saved</h2>
<p>For every prompt that reached the reminder: the model requests, tokens, money and wall time spent after the reminder point and after the stop point (the requests whose response ended after the judged batch settled, and the time from then to the prompt's end). In enforce no model request follows the stop. Usage read from ${sources}. Money: the cost the telemetry states (Claude Code <code>cost_usd</code>)${sv.priced ? ', else the price table passed with <code>--prices</code>' : ''}; never estimated otherwise: a request with neither is counted as <em>not known</em>.</p>
${unknown}
<div class="cards">${card('prompts stopped', n(stopped.length), 'saved-prompts', 'stop')}${card('requests after the stop', n(sv.totalAfterStop.requests), 'saved-requests', 'good')}${card('input tokens after the stop', n(sv.totalAfterStop.inputTokens), 'saved-input-tokens', 'good')}${card('output tokens after the stop', n(sv.totalAfterStop.outputTokens), 'saved-output-tokens', 'good')}${card('money after the stop', money(sv.totalAfterStop), 'saved-cost', 'good')}${card('wall time after the stop', duration(sv.totalAfterStop.wallMillis), 'saved-wall', 'good')}</div>
<h3>Per agent</h3>${groupTable('agent', sv.byAgent, withCache, 'savings-by-agent')}
<h3>Per deployment.environment</h3>${groupTable('deployment.environment', sv.byEnvironment, withCache, 'savings-by-environment')}
<p id="savings-total">Total: after the reminder ${cells(sv.totalAfterReminder, withCache).join(' / ')}; after the stop ${cells(sv.totalAfterStop, withCache).join(' / ')} (${head(withCache).join(' / ')}).${
    stopped.length === 0
      ? ''
      : ` Tokens after the stop per stopped prompt: median ${n(quantile(stopped.map(tokens), 0.5))}, p90 ${n(quantile(stopped.map(tokens), 0.9))}, max ${n(quantile(stopped.map(tokens), 1))}.`
  }</p>
${
  sv.prompts.length === 0
    ? '<p class="muted">No prompt reached the reminder.</p>'
    : `<h3>Per prompt</h3>${stopped.length === 0 ? '' : figure(render(savingsOption(stopped.slice(0, 40).map((p, i) => ({ label: `#${i + 1}`, input: p.afterStop.inputTokens, output: p.afterStop.outputTokens }))), 1040, 260), 'Tokens after the stop point per stopped prompt, largest first (the distribution; numbers match the table below).')}
${table(
  ['prompt', 'agent', 'mode', 'reminder at batch', 'stop at batch', ...head(withCache).map((h) => `after reminder: ${h}`), ...head(withCache).map((h) => `after stop: ${h}`)],
  sv.prompts
    .slice(0, MAX_SAVINGS_ROWS)
    .map((p) => [`<code>${e(outputId(p.promptId))}</code>`, e(p.agent), e(p.mode), n(p.warnBatch), p.stopBatch === undefined ? '-' : n(p.stopBatch), ...cells(p.afterReminder, withCache), ...cells(p.afterStop, withCache)]),
)}
${sv.prompts.length > MAX_SAVINGS_ROWS ? `<p class="muted">The ${n(MAX_SAVINGS_ROWS)} largest of ${n(sv.prompts.length)} prompts are listed; the totals cover all.</p>` : ''}`
}
<p class="muted">Shadow mode shows what the model did without the reminder: these are volumes, not a prediction of how a model reacts to it (design, Phase 1).</p></section>`;
}
