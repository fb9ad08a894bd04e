/**
 * `replay <file...>`: the main job. Replays recorded telemetry through the guard and prints the
 * decision timeline, a summary, the optional in-tree comparison and the Phase 1 invariants.
 */
import { readFile } from 'node:fs/promises';
import type { WireProfileName } from '../../profiles/registry.js';
import { auditInvariants, inputIdentifiers } from '../../replay/audit.js';
import { compareWithInTree } from '../../replay/compare.js';
import { emptyRecordBatch } from '../../otlp/records.js';
import { replayRecords } from '../../replay/replay.js';
import { parseTelemetryText, TelemetryParseError } from '../../otlp/telemetry-file.js';
import type { GuardMode } from '../../core/failure/types.js';
import { UserError } from '../io.js';
import type { CommandIo } from '../io.js';
import { decisionLine, renderComparison, renderInvariants, renderRepetition, renderSummary, renderTimeline, summarise } from '../../report/text.js';

/** Options of {@link runReplay}. */
export interface ReplayCommandOptions {
  readonly mode?: GuardMode;
  readonly profile: WireProfileName;
  readonly format: 'text' | 'json';
  readonly compare: boolean;
}

/**
 * Run `replay`. Resolves to the exit code: 0 all good, 1 a disagreement (with `--compare`) or an
 * invariant violation. Throws {@link UserError} for unreadable or malformed input.
 */
export async function runReplay(files: readonly string[], options: ReplayCommandOptions, io: CommandIo): Promise<number> {
  const records = emptyRecordBatch();
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new UserError(`${file}: cannot read (${code ?? (err as Error).message})`);
    }
    try {
      parseTelemetryText(text, file, records);
    } catch (err) {
      if (err instanceof TelemetryParseError) throw new UserError(err.message);
      throw err;
    }
  }
  let progressShown = false;
  const result = await replayRecords(records, {
    mode: options.mode,
    profile: options.profile,
    onProgress:
      io.progress === undefined
        ? undefined
        : (done, total) => {
            progressShown = true;
            io.progress?.(`replay: ${done}/${total} records`);
          },
  });
  if (progressShown) io.progress?.('\n');
  const invariants = auditInvariants(result.decisions, result.emitted, inputIdentifiers(records));
  const comparison = options.compare ? compareWithInTree(result.decisions, result.inTree) : undefined;
  const summary = summarise(result.decisions);
  const report: string[] = [
    ...renderSummary(summary, result.spanCount, result.logCount, result.unjudgedBatches, result.evictions),
    ...renderRepetition(result.repetition),
    ...(comparison === undefined ? [] : renderComparison(comparison)),
    ...renderInvariants(invariants),
  ];
  if (options.format === 'json') {
    for (const d of result.decisions) if (d.outcome.decision !== 'none') io.out(JSON.stringify(decisionLine(d)));
    for (const line of report) io.err(line);
  } else {
    for (const line of renderTimeline(result.decisions)) io.out(line);
    for (const line of report) io.out(line);
  }
  const disagree = comparison !== undefined && comparison.agreeing !== comparison.total;
  const violated = invariants.some((i) => !i.held);
  return disagree || violated ? 1 : 0;
}
