/**
 * The qwen-code in-tree guard's own `qwen-code.repeated_tool_failure_guard` events (wire
 * reference §2.2), read from recorded telemetry for `--compare`.
 */
import { parseGuardMode } from '../../core/mode.js';
import { INSTRUMENTATION_SCOPE_NAME } from '../wire-profile.js';
import type { GuardMode } from '../../core/failure/types.js';
import { hrTimeToMillis } from '../wire-profile.js';
import type { LogRecordView } from '../wire-profile.js';

/** One in-tree guard event. */
export interface InTreeGuardEvent {
  readonly promptId: string;
  readonly timeMillis: number;
  readonly mode: GuardMode | undefined;
  readonly decision: string;
  readonly phaseBefore: string | undefined;
  readonly phaseAfter: string | undefined;
  readonly failureCountBucket: string | undefined;
  readonly batchCountBucket: string | undefined;
  readonly candidateOrdinal: number | undefined;
  readonly resetReason: string | undefined;
}

const EVENT = 'qwen-code.repeated_tool_failure_guard';

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** The in-tree guard events among `logs`, in time order. Records of this package's scope are skipped. */
export function inTreeGuardEvents(logs: readonly LogRecordView[]): InTreeGuardEvent[] {
  const out: InTreeGuardEvent[] = [];
  for (const l of logs) {
    const a = l.attributes;
    if ((a['event.name'] ?? l.eventName) !== EVENT) continue;
    if (l.instrumentationScope.name === INSTRUMENTATION_SCOPE_NAME) continue;
    const promptId = str(a.prompt_id);
    const decision = str(a.decision);
    if (promptId === undefined || decision === undefined) continue;
    const ordinal = a.candidate_ordinal;
    out.push({
      promptId,
      timeMillis: hrTimeToMillis(l.hrTime),
      mode: parseGuardMode(str(a.mode)),
      decision,
      phaseBefore: str(a.phase_before),
      phaseAfter: str(a.phase_after),
      failureCountBucket: str(a.failure_count_bucket),
      batchCountBucket: str(a.batch_count_bucket),
      candidateOrdinal: typeof ordinal === 'number' ? ordinal : typeof ordinal === 'string' ? Number(ordinal) : undefined,
      resetReason: str(a.reset_reason),
    });
  }
  // The same record read twice (a file given twice, a duplicated export) counts once.
  const seen = new Set<string>();
  const unique = out.filter((e) => {
    const key = JSON.stringify([e.promptId, e.timeMillis, e.decision, e.phaseBefore, e.phaseAfter, e.failureCountBucket, e.batchCountBucket, e.candidateOrdinal, e.resetReason]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return unique.sort((x, y) => x.timeMillis - y.timeMillis);
}
