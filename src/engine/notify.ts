/**
 * Listener fan-out shared by both engines: every listener is called, and a listener that throws
 * is reported, never propagated (a processor hook must not throw into its host).
 */

/** Call `fn` for each listener; errors go to `reportError` and the next listener still runs. */
export function notifyAll<L>(listeners: readonly L[], fn: (listener: L) => void, reportError: (err: unknown) => void): void {
  for (const l of listeners) {
    try {
      fn(l);
    } catch (err) {
      reportError(err);
    }
  }
}
