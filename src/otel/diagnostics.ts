/**
 * Where the guard's configuration diagnostics go, so that a user sees them whatever the order of
 * set-up. The README's Quickstart creates the guard before `NodeSDK`, and `NodeSDK` installs its
 * diag logger (when `OTEL_LOG_LEVEL` is set) in its constructor: a `diag.warn` at guard creation
 * would reach no logger. So a diagnostic is written to `diag` at once when a diag logger is
 * installed, and otherwise held until the guard's first telemetry record, its shutdown, or one
 * second later, whichever comes first; then it goes to `diag` if a logger has appeared, else to a
 * Node process warning (`RepeatedToolFailureGuardWarning`, printed on stderr by default).
 */
import { diag } from '@opentelemetry/api';

const PREFIX = 'RepeatedToolFailureGuard: ';
/** Process warning type (`process.on('warning')` sees it as `warning.name`). */
export const GUARD_WARNING_TYPE = 'RepeatedToolFailureGuardWarning';
/** Held diagnostics beyond this are counted, not kept. */
const MAX_HELD = 64;
/** Milliseconds after which held diagnostics are shown even without telemetry. */
const HOLD_MILLIS = 1000;

/** Process warning code of a configuration diagnostic. */
export const INVALID_OPTION_WARNING_CODE = 'RTFG_INVALID_OPTION';
/** Process warning code of the diagnostic about telemetry no profile reads. */
export const UNREAD_TELEMETRY_WARNING_CODE = 'RTFG_UNREAD_TELEMETRY';

interface Diagnostic {
  readonly message: string;
  readonly code: string;
}

let held: Diagnostic[] = [];
let dropped = 0;
let timer: ReturnType<typeof setTimeout> | undefined;

/**
 * Whether a diag logger is installed: the OpenTelemetry API 1.x keeps it in its global registration
 * (`Symbol.for('opentelemetry.js.api.1')`), which `diag.setLogger` fills and `diag.disable` empties.
 */
export function isDiagLoggerInstalled(): boolean {
  const registry = (globalThis as Record<symbol, { diag?: unknown } | undefined>)[Symbol.for('opentelemetry.js.api.1')];
  return registry?.diag !== undefined;
}

function deliver(messages: readonly Diagnostic[]): void {
  if (isDiagLoggerInstalled()) {
    for (const m of messages) diag.warn(`${PREFIX}${m.message}`);
    return;
  }
  for (const m of messages) {
    try {
      process.emitWarning(`${PREFIX}${m.message}`, { type: GUARD_WARNING_TYPE, code: m.code });
    } catch {
      // never into the host
    }
  }
}

/**
 * Report diagnostics (see the module comment). Never throws.
 *
 * @param code - the process warning's code when no diag logger shows them @defaultValue {@link INVALID_OPTION_WARNING_CODE}
 */
export function reportGuardDiagnostics(messages: readonly string[], code: string = INVALID_OPTION_WARNING_CODE): void {
  if (messages.length === 0) return;
  if (held.length === 0 && isDiagLoggerInstalled()) {
    deliver(messages.map((message) => ({ message, code })));
    return;
  }
  for (const message of messages) {
    if (held.length < MAX_HELD) held.push({ message, code });
    else dropped += 1;
  }
  if (timer === undefined) {
    timer = setTimeout(flushGuardDiagnostics, HOLD_MILLIS);
    timer.unref?.();
  }
}

/** Show the held diagnostics now (the guard calls this on its first record and at shutdown). Never throws. */
export function flushGuardDiagnostics(): void {
  if (timer !== undefined) {
    clearTimeout(timer);
    timer = undefined;
  }
  if (held.length === 0) return;
  const messages = held;
  if (dropped > 0) messages.push({ message: `${dropped} more diagnostic(s) not shown`, code: INVALID_OPTION_WARNING_CODE });
  held = [];
  dropped = 0;
  deliver(messages);
}

/** Whether diagnostics are held (cheap check for the processors' hot path). */
export function hasHeldGuardDiagnostics(): boolean {
  return held.length > 0;
}
