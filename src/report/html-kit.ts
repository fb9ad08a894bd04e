/**
 * Small HTML helpers the report's sections share. Every value is HTML-escaped by the caller with
 * {@link escapeHtml}; numbers are formatted here.
 */
import type { GroupRow } from './report-data.js';

/** Escape text for HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export const e = escapeHtml;

export function n(v: number): string {
  return Math.round(v).toLocaleString('en-US');
}

export function usd(v: number): string {
  // Cents hide the cost of small runs (a Claude Code request can cost $0.0001): four significant digits below a cent.
  return v > 0 && v < 0.01 ? `$${v.toPrecision(4)}` : `$${v.toFixed(2)}`;
}

export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 120) return `${s.toFixed(1)} s`;
  const m = s / 60;
  return m < 120 ? `${m.toFixed(1)} min` : `${(m / 60).toFixed(1)} h`;
}

export function iso(ms: number | undefined): string {
  return ms === undefined ? '-' : new Date(ms).toISOString().replace('.000Z', 'Z');
}

export function counts(r: Readonly<Record<string, number>>): string {
  const parts = Object.entries(r)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `<code>${e(k)}</code>&nbsp;${n(v)}`);
  return parts.length === 0 ? '<span class="muted">none</span>' : parts.join(', ');
}

export function table(head: readonly string[], rows: readonly (readonly string[])[], highlighted: readonly boolean[] = []): string {
  return `<table><thead><tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr></thead><tbody>${rows
    .map((r, i) => `<tr${highlighted[i] === true ? ' class="default"' : ''}>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

export function groupRows(rows: readonly GroupRow[]): string[][] {
  return rows.map((r) => [e(r.group), e(r.serviceVersion), n(r.prompts), n(r.batches), n(r.wouldWarn), n(r.wouldStop)]);
}

/** The `q` quantile (nearest rank) of non-empty `values`. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}

export function card(label: string, value: string, id: string, tone = ''): string {
  return `<div class="card ${tone}"><div class="value" id="${id}">${value}</div><div class="label">${label}</div></div>`;
}

export function figure(svg: string, caption: string): string {
  return `<figure>${svg}<figcaption>${caption}</figcaption></figure>`;
}

