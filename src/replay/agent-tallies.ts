/**
 * Prompts and batches judged per agent (per built-in profile), for the summaries of `replay` and
 * `serve` and the report: a mixed fleet's input shows what each agent's profile judged.
 */
import type { BatchDecision } from '../engine/failure-types.js';
import { WIRE_PROFILE_PRECEDENCE } from '../profiles/registry.js';
import type { WireProfileName } from '../profiles/registry.js';

/** What one profile judged. */
export interface AgentTally {
  readonly profile: WireProfileName;
  /** Prompts judged: those whose first batch was decided (one count per prompt, in constant memory). */
  readonly prompts: number;
  /** Batches decided (every decision, `none` included). */
  readonly batches: number;
  /** Decisions `would_warn` or `warned`. */
  readonly wouldWarn: number;
  /** Decisions `would_stop` or `stopped`. */
  readonly wouldStop: number;
}

type Tally = { -readonly [K in keyof AgentTally]: AgentTally[K] };

/** Counts each decision under the profile that read its prompt. */
export class AgentTallies {
  private readonly _tallies = new Map<WireProfileName, Tally>();

  /**
   * Count one decision.
   *
   * @param profile - the profile that read the decision's prompt (`undefined`: not known; not counted)
   */
  add(profile: string | undefined, d: BatchDecision): void {
    if (profile === undefined || !WIRE_PROFILE_PRECEDENCE.includes(profile as WireProfileName)) return;
    const name = profile as WireProfileName;
    let t = this._tallies.get(name);
    if (t === undefined) this._tallies.set(name, (t = { profile: name, prompts: 0, batches: 0, wouldWarn: 0, wouldStop: 0 }));
    t.batches++;
    if (d.batch === 1) t.prompts++;
    const decision = d.outcome.decision;
    if (decision === 'would_warn' || decision === 'warned') t.wouldWarn++;
    if (decision === 'would_stop' || decision === 'stopped') t.wouldStop++;
  }

  /** The tallies of the profiles that judged something, in precedence order (copies). */
  list(): AgentTally[] {
    return WIRE_PROFILE_PRECEDENCE.flatMap((p) => {
      const t = this._tallies.get(p);
      return t === undefined ? [] : [{ ...t }];
    });
  }
}
