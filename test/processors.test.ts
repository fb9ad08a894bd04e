import { ROOT_CONTEXT } from '@opentelemetry/api';
import { createRepeatedToolFailureGuard } from '../src/otel/repeated-tool-failure-guard.js';
import type { BatchDecision } from '../src/engine/failure-types.js';
import { behavesLikeProcessor } from './helpers/behaves-like-processor.js';
import { loadFixture } from './helpers/recorded.js';

function fixtureGuard() {
  const guard = createRepeatedToolFailureGuard({ mode: 'shadow', sweepIntervalMillis: 0, controlHookRequired: false });
  const decisions: BatchDecision[] = [];
  guard.addListener({ onDecision: (d) => decisions.push(d) });
  const records = loadFixture('acp-shadow-drain');
  return { guard, decisions, records };
}

behavesLikeProcessor('RepeatedToolFailureGuardSpanProcessor', () => {
  const { guard, decisions, records } = fixtureGuard();
  return {
    feed: () => {
      for (const s of records.spans) {
        guard.spanProcessor.onStart(s as never, ROOT_CONTEXT);
        guard.spanProcessor.onEnd(s as never);
      }
    },
    feedGarbage: () => {
      guard.spanProcessor.onStart(null as never, ROOT_CONTEXT);
      guard.spanProcessor.onEnd({ name: 'qwen-code.tool', attributes: null } as never);
    },
    forceFlush: () => guard.spanProcessor.forceFlush(),
    shutdown: () => guard.spanProcessor.shutdown(),
    produced: () => decisions.length + guard.engine.openPromptCount,
  };
});

behavesLikeProcessor('RepeatedToolFailureGuardLogRecordProcessor', () => {
  const { guard, decisions, records } = fixtureGuard();
  return {
    feed: () => {
      for (const l of records.logs) guard.logRecordProcessor.onEmit(l as never);
    },
    feedGarbage: () => {
      guard.logRecordProcessor.onEmit(null as never);
      guard.logRecordProcessor.onEmit({ attributes: undefined, instrumentationScope: { name: 'x' } } as never);
    },
    forceFlush: () => guard.logRecordProcessor.forceFlush(),
    shutdown: () => guard.logRecordProcessor.shutdown(),
    produced: () => decisions.length + guard.engine.openPromptCount,
  };
});
