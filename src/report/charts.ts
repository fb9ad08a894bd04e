/**
 * Chart options for the report, as plain data, and the renderer that turns them into inline SVG.
 *
 * The renderer is Apache ECharts' server-side SVG renderer (`echarts.init(null, null, { renderer:
 * 'svg', ssr: true, width, height })` + `renderToSVGString()`): no DOM, no canvas, no network, and
 * its output is one `<svg>` element with inline styles. `echarts` is an optional peer dependency,
 * imported only by {@link loadChartRenderer}, so nothing else in the package loads it.
 */
import type { PromptTimeline } from './report-data.js';

/** An ECharts option object (kept as plain data: the package's types do not depend on `echarts`). */
export type ChartOption = Readonly<Record<string, unknown>>;

/** Renders one option to an `<svg>` string of the given size in CSS pixels. */
export type ChartRenderer = (option: ChartOption, width: number, height: number) => string;

/** `--report` without the optional `echarts` package. */
export class ReportDependencyError extends Error {
  override readonly name = 'ReportDependencyError';
}

interface EChartsLike {
  init(
    dom: null,
    theme: null,
    opts: { renderer: 'svg'; ssr: true; width: number; height: number },
  ): { setOption(o: unknown): void; renderToSVGString(): string; dispose(): void };
}

/**
 * Load the optional `echarts` package and return a renderer.
 *
 * @param specifier - the package to import (tests pass a missing one) @defaultValue `'echarts'`
 * @throws {ReportDependencyError} when `echarts` is not installed (message says how to install it)
 */
export async function loadChartRenderer(specifier = 'echarts'): Promise<ChartRenderer> {
  let echarts: EChartsLike;
  try {
    echarts = (await import(specifier)) as EChartsLike;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new ReportDependencyError('--report needs the optional package "echarts" (^6): run `npm install echarts@^6` next to repeated-tool-failure-guard');
    }
    throw err;
  }
  return (option, width, height) => {
    const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width, height });
    try {
      chart.setOption({ animation: false, ...option });
      return chart.renderToSVGString();
    } finally {
      chart.dispose();
    }
  };
}

/** Colours of the phases, decisions and series: one palette for the page and the charts. */
export const COLORS = {
  idle: '#e8eef3',
  tracking: '#f6d78b',
  warned: '#f4a259',
  latched: '#d1495b',
  failure: '#8c5e9a',
  request: '#5b8e7d',
  breaker: '#3d6fb4',
  text: '#1f2933',
  muted: '#6b7785',
  good: '#2e7d4f',
  bad: '#b3261e',
} as const;

const FONT = { fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif', color: COLORS.text };

const DECISION_SYMBOL: Readonly<Record<string, string>> = {
  tracked: 'circle',
  reset: 'emptyCircle',
  would_warn: 'triangle',
  warned: 'triangle',
  would_stop: 'rect',
  stopped: 'rect',
  would_abort: 'rect',
  aborted: 'rect',
};

/** Horizontal bars of counts by label (decisions, reset reasons). */
export function countsBarOption(title: string, counts: Readonly<Record<string, number>>): ChartOption {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  return {
    textStyle: FONT,
    title: { text: title, textStyle: { fontSize: 13, ...FONT }, left: 0, top: 2 },
    grid: { left: 120, right: 40, top: 38, bottom: 10 },
    xAxis: { type: 'value', minInterval: 1, axisLabel: { show: false }, splitLine: { show: false } },
    yAxis: { type: 'category', data: entries.map(([k]) => k), inverse: true, axisTick: { show: false } },
    series: [
      {
        type: 'bar',
        data: entries.map(([k, v]) => ({ value: v, itemStyle: { color: k.includes('stop') || k.includes('abort') ? COLORS.latched : k.includes('warn') ? COLORS.warned : k === 'reset' ? COLORS.muted : COLORS.breaker } })),
        label: { show: true, position: 'right' },
        barMaxWidth: 18,
      },
    ],
  };
}

/** Bars of tokens spent after the stop point, one per stopped prompt (the distribution). */
export function savingsOption(rows: readonly { readonly label: string; readonly input: number; readonly output: number }[]): ChartOption {
  return {
    textStyle: FONT,
    legend: { top: 0, left: 'center', data: ['input tokens', 'output tokens'] },
    grid: { left: 70, right: 10, top: 30, bottom: 40 },
    xAxis: { type: 'category', data: rows.map((r) => r.label), axisLabel: { rotate: 0 }, name: 'stopped prompts (largest first)', nameLocation: 'middle', nameGap: 26 },
    yAxis: { type: 'value', name: 'tokens after the stop point', nameTextStyle: { align: 'left' } },
    series: [
      { name: 'input tokens', type: 'bar', stack: 't', data: rows.map((r) => r.input), itemStyle: { color: COLORS.request }, barMaxWidth: 48 },
      { name: 'output tokens', type: 'bar', stack: 't', data: rows.map((r) => r.output), itemStyle: { color: COLORS.warned }, barMaxWidth: 48 },
    ],
  };
}

/**
 * One prompt's timeline: rows for the failure guard's state (bands), failures by key (dots sized
 * by count), the guard's decisions (marks), model requests and the identical-call breaker.
 * X is seconds since the prompt's start.
 */
export function timelineOption(t: PromptTimeline): ChartOption {
  const rows = ['state', ...t.keys.map((k, i) => `K${i + 1} ${k.executionErrorType}`), 'decisions', 'requests', 'breaker'];
  const y = (name: string): number => rows.indexOf(name);
  const sec = (ms: number): number => Math.round((ms - t.startMillis) / 10) / 100;
  const bandData = t.bands.map((b) => ({ value: [sec(b.fromMillis), sec(b.toMillis), 0, b.phase], itemStyle: { color: COLORS[b.phase as keyof typeof COLORS] ?? COLORS.idle } }));
  const failures = t.batches.flatMap((b) => b.failuresByKey.map((f) => [sec(b.atMillis), y(`K${f.key + 1} ${t.keys[f.key]?.executionErrorType ?? ''}`), f.count]));
  const marks = t.batches
    .filter((b) => b.decision !== 'none')
    .map((b) => ({
      value: [sec(b.atMillis), y('decisions')],
      symbol: DECISION_SYMBOL[b.decision] ?? 'circle',
      symbolSize: b.decision === 'tracked' ? 7 : 13,
      itemStyle: { color: b.decision.includes('stop') ? COLORS.latched : b.decision.includes('warn') ? COLORS.warned : b.decision === 'reset' ? COLORS.muted : COLORS.tracking, borderColor: COLORS.text, borderWidth: 0.5 },
      label: b.decision === 'tracked' ? { show: false } : { show: true, position: 'bottom', distance: 2, formatter: b.decision === 'reset' ? `reset: ${b.resetReason ?? ''}` : b.decision.replace('would_', ''), fontSize: 10 },
    }));
  const allBatches = t.batches.map((b) => [sec(b.atMillis), y('decisions')]);
  const requests = t.requests.map((r) => [sec(r.atMillis), y('requests')]);
  const breaker = t.breaker.map((r) => ({
    value: [sec(r.atMillis), y('breaker')],
    symbol: DECISION_SYMBOL[r.decision] ?? 'circle',
    symbolSize: 11,
    itemStyle: { color: COLORS.breaker },
    label: { show: true, position: 'right', formatter: `${r.decision.replace('would_', '')} (run ${r.runLength})`, fontSize: 10 },
  }));
  const maxX = Math.max(sec(t.endMillis), 0.01);
  return {
    textStyle: FONT,
    grid: { left: 150, right: 20, top: 14, bottom: 34 },
    xAxis: { type: 'value', min: 0, max: maxX, name: 'seconds since the prompt started', nameLocation: 'middle', nameGap: 22, axisLabel: { showMaxLabel: false }, splitLine: { lineStyle: { color: '#eef1f4' } } },
    yAxis: { type: 'category', data: rows, inverse: true, axisTick: { show: false }, splitLine: { show: true, lineStyle: { color: '#f3f5f7' } } },
    series: [
      {
        type: 'custom',
        name: 'state',
        renderItem: (_params: unknown, api: { value(i: number): number; coord(p: number[]): number[]; size(p: number[]): number[]; visual(key: string): unknown }) => {
          const a = api.coord([api.value(0), api.value(2)]);
          const b = api.coord([api.value(1), api.value(2)]);
          const h = (api.size([0, 1])[1] ?? 20) * 0.7;
          return { type: 'rect', shape: { x: a[0], y: (a[1] ?? 0) - h / 2, width: Math.max(1, (b[0] ?? 0) - (a[0] ?? 0)), height: h }, style: { fill: api.visual('color') } };
        },
        encode: { x: [0, 1], y: 2 },
        data: bandData,
      },
      { type: 'scatter', name: 'failures', data: failures, symbolSize: (v: number[]) => Math.min(26, 6 + 3 * (v[2] ?? 1)), itemStyle: { color: COLORS.failure, opacity: 0.85 }, label: { show: true, formatter: (p: { value: number[] }) => String(p.value[2]), color: '#fff', fontSize: 9 } },
      { type: 'scatter', name: 'batches', data: allBatches, symbolSize: 4, itemStyle: { color: COLORS.muted }, z: 1 },
      { type: 'scatter', name: 'decisions', data: marks, z: 3 },
      { type: 'scatter', name: 'requests', data: requests, symbol: 'diamond', symbolSize: 7, itemStyle: { color: COLORS.request } },
      { type: 'scatter', name: 'breaker', data: breaker },
    ],
  };
}

/** Heat map of a what-if metric over failure threshold × minimum batches. */
export function whatIfHeatmapOption(
  title: string,
  cells: readonly { readonly failures: number; readonly batches: number; readonly value: number; readonly isDefault: boolean }[],
): ChartOption {
  const xs = [...new Set(cells.map((c) => c.failures))].sort((a, b) => a - b);
  const ys = [...new Set(cells.map((c) => c.batches))].sort((a, b) => a - b);
  const max = Math.max(1, ...cells.map((c) => c.value));
  return {
    textStyle: FONT,
    title: { text: title, textStyle: { fontSize: 13, ...FONT }, left: 0 },
    grid: { left: 90, right: 20, top: 34, bottom: 44 },
    xAxis: { type: 'category', data: xs.map(String), name: 'failure threshold', nameLocation: 'middle', nameGap: 26 },
    yAxis: { type: 'category', data: ys.map(String), name: 'min. batches', nameLocation: 'middle', nameGap: 40 },
    visualMap: { show: false, min: 0, max, inRange: { color: ['#f4f7f9', '#f6d78b', '#d1495b'] } },
    series: [
      {
        type: 'heatmap',
        // The default cell last, so that its frame is drawn over its neighbours'.
        data: [...cells.filter((c) => !c.isDefault), ...cells.filter((c) => c.isDefault)].map((c) => ({
          value: [xs.indexOf(c.failures), ys.indexOf(c.batches), c.value],
          itemStyle: c.isDefault ? { borderColor: COLORS.text, borderWidth: 3 } : { borderColor: '#fff', borderWidth: 1 },
        })),
        label: { show: true, fontSize: 11, formatter: (p: { value: number[] }) => (p.value[2] ?? 0).toLocaleString('en-US') },
      },
    ],
  };
}
