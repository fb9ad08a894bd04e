/**
 * Matching a host's own list of a batch's calls ({@link HookListedCall}: gemini-cli's session
 * transcript) with the calls its hooks recorded. Pure.
 *
 * gemini-cli 0.61.0 fires `BeforeTool` only for a call that passed validation (not for invalid
 * arguments or an unknown tool) and `AfterTool` only for a call that ran (not for a policy denial, a
 * hook's denial or a user's rejection), and no hook input lists a batch's calls: a batch the hooks
 * alone see may lack calls the design counts as resets. The transcript lists every call of the model
 * turn with its status, so each listed call is accounted for: one the hooks recorded is theirs; one
 * they never recorded did not run to its `AfterTool`.
 */
import type { ToolCallObservation } from '../core/failure/types.js';
import type { HookCallOutcome, HookListedCall } from './hook-event.js';

/** A listed call no hook recorded, with the outcome the design gives it. */
export interface UnrecordedListedCall {
  readonly toolName: string;
  readonly outcome: HookCallOutcome;
}

/** The status a host's record gives a call the hooks recorded with this observation. */
function statusOf(o: ToolCallObservation): HookListedCall['status'] {
  if (o.terminalStatus === 'success') return 'success';
  if (o.terminalStatus === 'cancelled') return 'cancelled';
  return 'error';
}

const NOT_STARTED: HookCallOutcome = Object.freeze({ kind: 'not_started' });
const CANCELLED: HookCallOutcome = Object.freeze({ kind: 'cancelled' });

/**
 * The listed calls the hooks did not record, matched by tool name and status (the hooks' call ids
 * are not the host's): a listed `error` call is `not_started` (refused before it ran: validation,
 * an unknown tool, a policy or hook denial), a listed `cancelled` call is `cancelled` (a user's
 * rejection).
 *
 * @param recorded - the open batch's observations (what the hooks recorded)
 * @param listed - the host's list of the turn's calls
 * @returns the unrecorded calls, or `undefined` when the two cannot be matched: a recorded call the
 *   list lacks (or lists with another status), or an unrecorded call listed as a success or with a
 *   status the host gives no meaning to. The batch is then incomplete: a reset, never a success.
 */
export function unrecordedListedCalls(recorded: readonly ToolCallObservation[], listed: readonly HookListedCall[]): readonly UnrecordedListedCall[] | undefined {
  const byKey = new Map<string, { toolName: string; status: HookListedCall['status']; count: number }>();
  const entry = (toolName: string, status: HookListedCall['status']) => {
    const key = `${status}\u0000${toolName}`;
    let e = byKey.get(key);
    if (e === undefined) byKey.set(key, (e = { toolName, status, count: 0 }));
    return e;
  };
  for (const c of listed) entry(c.toolName, c.status).count += 1;
  for (const o of recorded) {
    if (o.policyToolName === undefined) return undefined;
    entry(o.policyToolName, statusOf(o)).count -= 1;
  }
  const out: UnrecordedListedCall[] = [];
  for (const { toolName, status, count } of byKey.values()) {
    if (count < 0) return undefined;
    if (count === 0) continue;
    if (status !== 'error' && status !== 'cancelled') return undefined;
    for (let i = 0; i < count; i++) out.push({ toolName, outcome: status === 'error' ? NOT_STARTED : CANCELLED });
  }
  return out;
}
