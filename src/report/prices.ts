/**
 * Money in the report: only what the telemetry states (Claude Code `cost_usd`) or what a price
 * table the user passes gives (`--prices prices.json`). Never guessed: a request with neither is
 * counted as "cost not known".
 *
 * The price table's shape (docs/report.md), US dollars per million tokens, by the model name the
 * agent records (`model`, `gen_ai.request.model`):
 *
 * ```json
 * { "models": { "qwen3-coder-plus": { "input": 1.0, "output": 5.0, "cacheRead": 0.1 } } }
 * ```
 *
 * `input` and `output` are required; `cacheRead` and `cacheCreation` default to `input`. Cached
 * input tokens are priced at `cacheRead` once: where the agent's input count includes them (qwen-code,
 * gemini-cli, the GenAI conventions) they are taken out of it first; Claude Code's `input_tokens`
 * excludes them.
 */
import type { UsageRecord } from '../profiles/report-inputs.js';

/** Prices of one model, US dollars per million tokens. */
export interface ModelPrice {
  readonly input: number;
  readonly output: number;
  /** @defaultValue `input` */
  readonly cacheRead?: number;
  /** @defaultValue `input` */
  readonly cacheCreation?: number;
}

/** A user-passed price table (see the module comment). */
export interface PriceTable {
  readonly models: Readonly<Record<string, ModelPrice>>;
}

/** A price table that does not have the documented shape; the message names the field, never a value. */
export class PriceTableError extends Error {
  override readonly name = 'PriceTableError';
}

const PRICE_KEYS = ['input', 'output', 'cacheRead', 'cacheCreation'] as const;

/**
 * Check a parsed price table.
 *
 * @throws {PriceTableError} when `value` is not `{ models: { <name>: { input, output, cacheRead?, cacheCreation? } } }`
 *   with finite non-negative numbers
 */
export function parsePriceTable(value: unknown): PriceTable {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new PriceTableError('the price table must be a JSON object with a "models" object');
  const models = (value as { models?: unknown }).models;
  if (typeof models !== 'object' || models === null || Array.isArray(models)) throw new PriceTableError('the price table needs a "models" object');
  const out: Record<string, ModelPrice> = {};
  for (const [name, price] of Object.entries(models as Record<string, unknown>)) {
    if (typeof price !== 'object' || price === null) throw new PriceTableError(`models.<${Object.keys(out).length + 1}th model> must be an object`);
    const p = price as Record<string, unknown>;
    for (const k of Object.keys(p)) {
      if (!(PRICE_KEYS as readonly string[]).includes(k)) throw new PriceTableError(`unknown price field "${k.slice(0, 32)}" (expected ${PRICE_KEYS.join(', ')})`);
    }
    for (const k of PRICE_KEYS) {
      const v = p[k];
      if (v === undefined && (k === 'cacheRead' || k === 'cacheCreation')) continue;
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new PriceTableError(`every model needs "${k}" as a non-negative number (US dollars per million tokens)`);
    }
    Object.defineProperty(out, name, { value: p as unknown as ModelPrice, enumerable: true });
  }
  return { models: out };
}

/** Agents whose input token count includes the cached input tokens (profile names). */
const INPUT_INCLUDES_CACHE: ReadonlySet<string> = new Set(['qwen-code', 'gemini-cli', 'genai', 'ai-sdk', 'batch-span']);

/** The cost of one request and where it came from. */
export interface RequestCost {
  readonly usd: number;
  /** `stated`: the telemetry's own figure; `priced`: from the price table. */
  readonly source: 'stated' | 'priced';
}

/**
 * The cost of a request: the telemetry's own figure, else the price table's for its model, else
 * `undefined` (not known).
 *
 * @param agent - the profile that read the request (whether its input count includes cached tokens)
 */
export function requestCost(u: UsageRecord, agent: string | undefined, prices: PriceTable | undefined): RequestCost | undefined {
  if (u.costUsd !== undefined) return { usd: u.costUsd, source: 'stated' };
  if (prices === undefined || u.model === undefined || !Object.prototype.hasOwnProperty.call(prices.models, u.model)) return undefined;
  const p = prices.models[u.model] as ModelPrice;
  if (u.inputTokens === undefined && u.outputTokens === undefined) return undefined;
  const cacheRead = u.cacheReadTokens ?? 0;
  const cacheCreation = u.cacheCreationTokens ?? 0;
  const input = Math.max(0, (u.inputTokens ?? 0) - (agent !== undefined && INPUT_INCLUDES_CACHE.has(agent) ? cacheRead : 0));
  const usd = (input * p.input + (u.outputTokens ?? 0) * p.output + cacheRead * (p.cacheRead ?? p.input) + cacheCreation * (p.cacheCreation ?? p.input)) / 1_000_000;
  return { usd, source: 'priced' };
}
