/**
 * The per-session state file of the `claude-code-hook` command: one small JSON file per Claude
 * Code session in a private directory, read and replaced under a lock, written atomically (a
 * temporary file renamed over the old one), expired by age.
 *
 * Claude Code runs a hook as a fresh process per event, and runs the hooks of sibling calls
 * concurrently (PostToolUseFailure of a parallel batch overlap), so every read-modify-write holds
 * an exclusive lock file (`<state>.lock`, created with `O_EXCL`). A lock older than
 * `staleLockMillis` (a crashed hook) is broken. When the lock cannot be taken within
 * `lockTimeoutMillis` the update is skipped and {@link HookStateStore.update} returns `undefined`:
 * the hook then answers nothing (fail open), it never blocks the agent.
 */
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Options of {@link HookStateStore}. */
export interface HookStateStoreOptions {
  /** A state file untouched this long is deleted by {@link HookStateStore.sweep}. @defaultValue 24 h (ms) */
  readonly maxAgeMillis?: number;
  /** How long to wait for the lock. @defaultValue 2000 ms */
  readonly lockTimeoutMillis?: number;
  /** A lock file older than this is broken. @defaultValue 10000 ms */
  readonly staleLockMillis?: number;
  /** A state file larger than this is not read (treated as absent). @defaultValue 1 MiB */
  readonly maxFileBytes?: number;
  /** Wall clock. @defaultValue `Date.now` */
  readonly now?: () => number;
}

const DEFAULTS = {
  maxAgeMillis: 24 * 60 * 60 * 1000,
  lockTimeoutMillis: 2_000,
  staleLockMillis: 10_000,
  maxFileBytes: 1024 * 1024,
};

/** Files checked per {@link HookStateStore.sweep} (the directory normally holds a few). */
const SWEEP_LIMIT = 512;

const sleepCell = new Int32Array(new SharedArrayBuffer(4));
function sleepMillis(ms: number): void {
  Atomics.wait(sleepCell, 0, 0, ms);
}

/** A directory of per-session state files. */
export class HookStateStore {
  readonly dir: string;
  private readonly _o: Required<Omit<HookStateStoreOptions, 'now'>>;
  private readonly _now: () => number;

  /**
   * @param dir - the state directory; created (mode 0700) on first write
   * @param options - bounds and clock
   */
  constructor(dir: string, options: HookStateStoreOptions = {}) {
    this.dir = dir;
    this._o = {
      maxAgeMillis: options.maxAgeMillis ?? DEFAULTS.maxAgeMillis,
      lockTimeoutMillis: options.lockTimeoutMillis ?? DEFAULTS.lockTimeoutMillis,
      staleLockMillis: options.staleLockMillis ?? DEFAULTS.staleLockMillis,
      maxFileBytes: options.maxFileBytes ?? DEFAULTS.maxFileBytes,
    };
    this._now = options.now ?? Date.now;
  }

  /** The state file of a session: a hash of its id, so no id or path text reaches the file name. */
  fileOf(sessionId: string): string {
    return join(this.dir, `${createHash('sha256').update(sessionId).digest('hex').slice(0, 32)}.json`);
  }

  /**
   * Read the session's state, let `change` compute the next one, write it, all under the lock.
   *
   * @param sessionId - Claude Code's `session_id`
   * @param change - gets the parsed JSON (or `undefined` when absent, unreadable, too large or
   *   expired) and returns `[next state to write, result]`
   * @returns the result, or `undefined` when the lock was not obtained in time
   * @throws only what `change` throws, or a file-system error other than lock contention
   */
  update<T>(sessionId: string, change: (current: unknown) => readonly [unknown, T]): T | undefined {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const file = this.fileOf(sessionId);
    const lock = `${file}.lock`;
    if (!this._lock(lock)) return undefined;
    try {
      const [next, result] = change(this._read(file));
      const tmp = `${file}.${process.pid}.${this._now()}.tmp`;
      writeFileSync(tmp, JSON.stringify(next), { mode: 0o600 });
      renameSync(tmp, file);
      return result;
    } finally {
      try {
        unlinkSync(lock);
      } catch {
        // broken by another process as stale: nothing to release
      }
    }
  }

  /** Delete state files (and stale locks or temporaries) untouched for longer than `maxAgeMillis`. */
  sweep(): number {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return 0;
    }
    let removed = 0;
    const cutoff = this._now() - this._o.maxAgeMillis;
    for (const name of names.slice(0, SWEEP_LIMIT)) {
      if (!/^[0-9a-f]{32}\.json(\.lock|\.\d+\.\d+\.tmp)?$/.test(name)) continue;
      const path = join(this.dir, name);
      try {
        if (statSync(path).mtimeMs < cutoff) {
          unlinkSync(path);
          removed += 1;
        }
      } catch {
        // raced with another hook
      }
    }
    return removed;
  }

  private _read(file: string): unknown {
    try {
      const st = statSync(file);
      if (st.size > this._o.maxFileBytes || st.mtimeMs < this._now() - this._o.maxAgeMillis) return undefined;
      return JSON.parse(readFileSync(file, 'utf8')) as unknown;
    } catch {
      return undefined;
    }
  }

  private _lock(lock: string): boolean {
    const deadline = this._now() + this._o.lockTimeoutMillis;
    for (let attempt = 0; ; attempt++) {
      try {
        closeSync(openSync(lock, 'wx', 0o600));
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      try {
        if (statSync(lock).mtimeMs < this._now() - this._o.staleLockMillis) {
          unlinkSync(lock);
          continue;
        }
      } catch {
        continue; // released meanwhile
      }
      if (this._now() >= deadline) return false;
      sleepMillis(Math.min(5 + attempt, 25));
    }
  }
}
