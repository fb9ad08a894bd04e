/**
 * Issue 13 item 3: `execution_error_type` is a closed vocabulary. Each profile declares the values
 * its agent writes; anything else is emitted as `other` (never the raw string) while the reducer
 * still keys on a digest of the raw value in memory.
 */
import { describe, expect, it } from 'vitest';
import { classifyExecutionErrorType, executionErrorTypeLabel, OTHER_EXECUTION_ERROR_TYPE } from '../src/engine/error-vocabulary.js';
import { QWEN_CODE_TOOL_ERROR_TYPES } from '../src/profiles/qwen-code/tool-error-types.js';
import { WIRE_PROFILES } from '../src/profiles/registry.js';
import { setup } from './helpers/setup.js';

const QWEN = new Set(QWEN_CODE_TOOL_ERROR_TYPES);
const P = 'sess-1########1';
const SECRET = 'customer_acme_db_password_hunter2';

describe('classifyExecutionErrorType / executionErrorTypeLabel', () => {
  it.each([
    { raw: 'file_not_found', key: 'file_not_found', label: 'file_not_found' },
    { raw: 'shell_execute_error', key: 'shell_execute_error', label: 'shell_execute_error' },
    { raw: 'unknown', key: 'unknown', label: 'unknown' },
    { raw: SECRET, key: /^other#[A-Za-z0-9_-]{11}$/, label: OTHER_EXECUTION_ERROR_TYPE },
    { raw: 'ENOENT: /etc/passwd', key: undefined, label: undefined },
    { raw: 'File_Not_Found', key: undefined, label: undefined },
    { raw: '', key: undefined, label: undefined },
    { raw: `a${'b'.repeat(64)}`, key: undefined, label: undefined },
  ])('$raw', ({ raw, key, label }) => {
    const k = classifyExecutionErrorType(raw, QWEN);
    if (key instanceof RegExp) expect(k).toMatch(key);
    else expect(k).toBe(key);
    if (k !== undefined) {
      expect(executionErrorTypeLabel(k, QWEN)).toBe(label);
      expect(executionErrorTypeLabel(k)).toBe(label);
    }
  });

  it('two different unlisted values get different keys; the same value the same key', () => {
    const a = classifyExecutionErrorType('vendor_error_a', QWEN);
    expect(a).toBe(classifyExecutionErrorType('vendor_error_a', QWEN));
    expect(a).not.toBe(classifyExecutionErrorType('vendor_error_b', QWEN));
  });

  it('without a vocabulary (a bare engine), identifiers are kept and free text is still unclassified', () => {
    expect(classifyExecutionErrorType('vendor_error_a', undefined)).toBe('vendor_error_a');
    expect(classifyExecutionErrorType('ENOENT: /etc/passwd', undefined)).toBeUndefined();
  });

  it('with a vocabulary, a key that did not come from the classifier is still labelled other', () => {
    expect(executionErrorTypeLabel(SECRET, QWEN)).toBe(OTHER_EXECUTION_ERROR_TYPE);
  });

  it('every built-in profile declares a closed vocabulary of identifiers', () => {
    for (const def of Object.values(WIRE_PROFILES)) {
      expect(def.executionErrorTypes.length).toBeGreaterThan(0);
      for (const v of def.executionErrorTypes) expect(v).toMatch(/^[a-z][a-z0-9_]{0,63}$/);
    }
  });
});

describe('the guard with an error type outside the vocabulary', () => {
  it('a planted secret-shaped error type still forms a candidate, and is emitted as other, nowhere raw', async () => {
    const s = setup();
    s.agent.startPrompt(P);
    for (let b = 0; b < 5; b++) {
      s.agent.modelRequest(P);
      s.agent.toolCall(P, { name: 'run_query', status: 'error', errorType: SECRET });
      s.agent.toolCall(P, { name: 'run_query', status: 'error', errorType: SECRET });
    }
    s.agent.endPrompt(P);
    const events = s.guardEvents();
    expect(events.map((e) => e.attributes.decision)).toEqual(['tracked', 'tracked', 'tracked', 'would_warn', 'would_stop']);
    for (const e of events) expect(e.attributes.execution_error_type).toBe('other');
    const everything = JSON.stringify([
      s.guardLogs.getFinishedLogRecords().map((r) => [r.attributes, r.body]),
      await s.metricPoints(),
    ]);
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain('hunter2');
    await s.shutdown();
  });

  it('two different unlisted error types in one batch are mixed keys, as two listed ones would be', async () => {
    const s = setup();
    s.agent.startPrompt(P);
    s.agent.modelRequest(P);
    s.agent.toolCall(P, { name: 'run_query', status: 'error', errorType: 'vendor_error_a' });
    s.agent.toolCall(P, { name: 'run_query', status: 'error', errorType: 'vendor_error_b' });
    s.agent.modelRequest(P);
    s.agent.endPrompt(P);
    expect(s.decisions.map((d) => [d.outcome.decision, d.outcome.resetReason])).toEqual([['none', undefined]]);
    await s.shutdown();
  });
});
