/**
 * The top of the report: the verdict paragraph, the loop keys ranked by cost and the daily trend of
 * reminders and stops per environment.
 */
import { e, n, table } from './html-kit.js';
import { money } from './html-savings.js';
import type { ReportData } from './report-data.js';
import type { RunMode } from './verdict.js';

/** The page title for a run mode. */
export function reportTitle(mode: RunMode): string {
  return `Repeated tool-failure guard: ${mode} report`;
}

const plural = (k: number, one: string, many = `${one}s`): string => `${n(k)} ${k === 1 ? one : many}`;

/** The verdict paragraph. */
export function renderVerdict(data: ReportData): string {
  const v = data.verdict;
  const s = v.savedAfterStop;
  const act = v.runMode === 'enforce' ? 'stopped' : v.runMode === 'mixed' ? 'stopped or would have stopped' : 'would have stopped';
  const unknown: string[] = [];
  if (v.agentsWithoutUsage.length > 0) unknown.push(`the usage of ${v.agentsWithoutUsage.map((a) => `<code>${e(a)}</code>`).join(', ')} (no usage record in its telemetry)`);
  if (s.uncostedRequests > 0) unknown.push(`the money of ${plural(s.uncostedRequests, 'request')} after the stop (no stated cost, no price)`);
  if (v.unjudgedBatches > 0) unknown.push(`${plural(v.unjudgedBatches, 'batch', 'batches')} not judged`);
  if (v.unreadRecords > 0) unknown.push(`${plural(v.unreadRecords, 'record')} of producers no profile reads`);
  if (v.evictedPrompts > 0) unknown.push(`the rest of ${plural(v.evictedPrompts, 'evicted prompt')}`);
  if (v.invariantsNotCheckable > 0) unknown.push(`${plural(v.invariantsNotCheckable, 'invariant')} this telemetry cannot check`);
  if (v.promptsWithoutCohort > 0) unknown.push(`the cohort (mode) of ${plural(v.promptsWithoutCohort, 'prompt')}, which the rollout gate leaves out`);
  const invariants =
    v.invariantsViolated > 0
      ? `<strong class="violated">${plural(v.invariantsViolated, 'invariant')} VIOLATED</strong>`
      : `Every checkable invariant held (${n(v.invariantsHeld)})`;
  return `<p id="verdict" class="verdict"><strong>Verdict (${e(v.runMode)}).</strong> ${plural(v.looped, 'prompt')} of ${n(v.prompts)} looped (reached the reminder); enforce ${act} <span id="verdict-stopped">${n(v.stopped)}</span>, saving ${plural(s.requests, 'model request')}, ${n(s.inputTokens + s.outputTokens)} tokens and ${money(s)}. ${invariants}. False-positive candidates: <span id="verdict-fp">${n(v.falsePositiveCandidates)}</span> (a reminded prompt whose candidate tool later succeeded without new input). Not known: ${unknown.length === 0 ? 'nothing' : unknown.join('; ')}.</p>`;
}

/** The loop keys ranked by cost, and the daily trend. */
export function renderRankingAndTrend(data: ReportData): string {
  const ranking =
    data.keyRanking.length === 0
      ? '<p class="muted">No loop reached the reminder.</p>'
      : table(
          ['agent', 'execution error type', 'tool type', 'prompts reminded', 'prompts stopped', 'after reminder: tokens', 'after reminder: money', 'after stop: tokens', 'after stop: money'],
          data.keyRanking.slice(0, 25).map((r) => [
            e(r.agent),
            `<code>${e(r.executionErrorType)}</code>`,
            e(r.toolType),
            n(r.prompts),
            n(r.stopped),
            n(r.afterReminder.inputTokens + r.afterReminder.outputTokens),
            money(r.afterReminder),
            n(r.afterStop.inputTokens + r.afterStop.outputTokens),
            money(r.afterStop),
          ]),
        );
  const environments = [...new Set(data.trend.map((t) => t.environment))];
  const days = [...new Set(data.trend.map((t) => t.day))];
  const at = new Map(data.trend.map((t) => [`${t.day}\u0000${t.environment}`, t]));
  const trend =
    days.length === 0
      ? '<p class="muted">No decision in the input.</p>'
      : `<table id="trend"><thead><tr><th rowspan="2">day (UTC)</th>${environments.map((env) => `<th colspan="2">${e(env)}</th>`).join('')}</tr><tr>${environments.map(() => '<th>would warn</th><th>would stop</th>').join('')}</tr></thead><tbody>${days
          .map(
            (d) =>
              `<tr><td>${e(d)}</td>${environments
                .map((env) => {
                  const t = at.get(`${d}\u0000${env}`);
                  return `<td>${n(t?.wouldWarn ?? 0)}</td><td>${n(t?.wouldStop ?? 0)}</td>`;
                })
                .join('')}</tr>`,
          )
          .join('')}</tbody></table>`;
  return `<section id="keys"><h2>Loop keys ranked by cost</h2>
<p>A key is a tool and an execution error type; the tool is not named here (it is part of the private failure key): each row is an agent, an execution error type and a tool type, with what its loops spent after the reminder and after the stop point, most expensive first (money, then tokens).</p>${ranking}
<h3>Daily trend per deployment.environment</h3><p>Reminders (would warn / warned) and stops (would stop / stopped) per UTC day over the input's time range, decided on the day their batch settled.</p>${trend}</section>`;
}
