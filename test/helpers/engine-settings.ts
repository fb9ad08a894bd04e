import type { FailureEngineSettings } from '../../src/engine/failure-types.js';

/**
 * Failure-engine settings for tests that drive the engine directly: shadow mode, no forced-off
 * message types, 100 prompts, 64 calls a batch, an hour before a prompt is idle, no control hook
 * required, a clock that reads 0, and every reported error thrown (so a test fails on it).
 * `overrides` replaces any of them.
 */
export function engineSettings(overrides: Partial<FailureEngineSettings> = {}): FailureEngineSettings {
  return {
    mode: 'shadow',
    offMessageTypes: [],
    maxOpenPrompts: 100,
    maxCallsPerBatch: 64,
    promptIdleMillis: 3_600_000,
    controlHookRequired: false,
    now: () => 0,
    reportError: (err) => {
      throw err;
    },
    ...overrides,
  };
}
