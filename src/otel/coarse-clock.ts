/**
 * A clock read once per tick instead of once per call: the in-process guard stamps every record
 * with its prompt's last activity, and a `Date.now()` per record (about 50 ns on a VM) was a tenth
 * of the guard's cost per batch. Idleness is judged in minutes (`promptIdleMillis` is at least one
 * second, two hours by default), so a stamp up to one tick old changes nothing. Internal.
 */
export class CoarseClock {
  private readonly _source: () => number;
  private readonly _timer: ReturnType<typeof setInterval>;
  private _value: number;

  /**
   * Reads `source` now and every `tickMillis` after, on an unref'd interval (it never keeps the
   * process alive). While the event loop is blocked the reading does not advance: a long
   * synchronous run shares one reading.
   *
   * @param source - the clock in milliseconds
   * @param tickMillis - milliseconds between readings (default `1000`)
   */
  constructor(source: () => number, tickMillis = 1_000) {
    this._source = source;
    this._value = source();
    this._timer = setInterval(() => {
      this._value = this._source();
    }, tickMillis);
    this._timer.unref?.();
  }

  /** The last reading, in the source's milliseconds; bound, so it can be passed as a clock. */
  readonly now = (): number => this._value;

  /** Stop the ticks (idempotent); the last reading stays. */
  stop(): void {
    clearInterval(this._timer);
  }
}
