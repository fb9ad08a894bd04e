import type { BatchDecision } from '../../src/engine/failure-types.js';

/** One prompt's decisions in the shape of conformance/genai/expected.json. */
export interface ExpectedPrompt {
  readonly batches: number;
  readonly calls?: readonly number[];
  readonly decisions: readonly string[];
}

/** Decisions per prompt in the order the prompts first decided, in the shape of expected.json. */
export function byPrompt(decisions: readonly BatchDecision[]): ExpectedPrompt[] {
  const prompts = new Map<string, BatchDecision[]>();
  for (const d of decisions) prompts.set(d.promptId, [...(prompts.get(d.promptId) ?? []), d]);
  return [...prompts.values()].map((ds) => ({
    batches: ds.length,
    calls: ds.map((d) => d.receipt.observations.length),
    decisions: ds
      .filter((d) => d.outcome.decision !== 'none')
      .map((d) => `${d.batch}:${d.outcome.decision}${d.outcome.resetReason === undefined ? '' : `/${d.outcome.resetReason}`}`),
  }));
}
