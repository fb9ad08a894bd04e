/**
 * The per-session state files of a hook: one small JSON file per session in a private directory,
 * read and replaced under a lock, written atomically (a temporary file renamed over the old one),
 * expired by age.
 *
 * A host runs a command hook as a fresh process per event, and may run the hooks of sibling calls
 * concurrently (Claude Code: the PostToolUseFailure hooks of a parallel batch overlap), so every
 * read-modify-write holds an exclusive lock file (`<state>.lock`, created with `O_EXCL`). A lock
 * older than `staleLockMillis` (a crashed hook) is broken. When the lock cannot be taken within
 * `lockTimeoutMillis`, the update is skipped, a "lost record" marker file is left beside the state
 * (created without the lock), and {@link HookStateStore.update} returns `undefined`: the hook
 * answers nothing (fail open), and the next update that gets the lock is told how many records
 * were lost, so the batch they belonged to is judged incomplete, never read as a success.
 *
 * Safety: the directory is created with mode 0700; an existing directory that is a symbolic link,
 * is owned by another user or is writable by group or others is refused ({@link UnsafeStateDirError}).
 * Every file is created with `O_EXCL` and read with `O_NOFOLLOW`, so no write or read follows a
 * symbolic link planted in the directory. Every operation is asynchronous, so the hook's own time
 * limit can end the process even when the file system does not answer.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** Options of {@link HookStateStore}. */
export interface HookStateStoreOptions {
  /** A state file untouched this long is deleted by {@link HookStateStore.sweep}. @defaultValue 24 h (ms) */
  readonly maxAgeMillis?: number;
  /** How long to wait for the lock. @defaultValue 2000 ms */
  readonly lockTimeoutMillis?: number;
  /** A lock file older than this is broken. @defaultValue 10000 ms */
  readonly staleLockMillis?: number;
  /** A state file larger than this is not read (treated as absent, and reported). @defaultValue 1 MiB */
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
/** Lost-record markers counted per update (more still make the batch incomplete). */
const LOST_LIMIT = 64;

const NAME = /^[0-9a-f]{32}\.json(\.lock|\.[0-9a-f]{16}\.tmp|\.[0-9a-f]{16}\.lost)?$/;

/** The state directory is not safe to use (a symbolic link, another owner, or writable by others). */
export class UnsafeStateDirError extends Error {
  override readonly name = 'UnsafeStateDirError';
}

/** What {@link HookStateStore.update}'s `change` is given. */
export interface HookStateRead {
  /** The parsed JSON, or `undefined` when absent, unreadable, too large or expired. */
  readonly current: unknown;
  /** Why an existing file was not used: `too_large`, `unreadable`; `undefined` when it was (or none existed). */
  readonly discarded: 'too_large' | 'unreadable' | undefined;
  /** Records lost (lock timeouts) since the last update; their markers are removed. */
  readonly lostRecords: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Where the hook runtime keeps per-session state: a directory of files ({@link HookStateStore}, one
 * process per event) or memory (`MemoryHookStateStore`, a resident endpoint).
 */
export interface HookSessionStore {
  /**
   * Read the session's state, let `change` compute the next one and keep it, as one step no other
   * update of the session interleaves with.
   *
   * @returns the result, or `undefined` when the update was lost (its record must then make the
   *   batch incomplete)
   */
  update<T>(sessionId: string, change: (read: HookStateRead) => readonly [unknown, T]): Promise<T | undefined>;
  /** Drop expired sessions; resolves to how many were dropped. */
  sweep(): Promise<number>;
}

/** A directory of per-session state files. */
export class HookStateStore implements HookSessionStore {
  readonly dir: string;
  private readonly _o: Required<Omit<HookStateStoreOptions, 'now'>>;
  private readonly _now: () => number;
  private _checked = false;

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
   * @param sessionId - the host's session id
   * @param change - gets what was read and returns `[next state to write, result]`
   * @returns the result, or `undefined` when the lock was not obtained in time (a lost-record
   *   marker is then left for the next update)
   * @throws {UnsafeStateDirError} when the directory is unsafe; otherwise only what `change` throws,
   *   or a file-system error other than lock contention
   */
  async update<T>(sessionId: string, change: (read: HookStateRead) => readonly [unknown, T]): Promise<T | undefined> {
    await this._ensureDir();
    const file = this.fileOf(sessionId);
    const lock = `${file}.lock`;
    if (!(await this._lock(lock))) {
      await this._create(`${file}.${randomBytes(8).toString('hex')}.lost`, '');
      return undefined;
    }
    try {
      const lostRecords = await this._takeLost(file);
      const { current, discarded } = await this._read(file);
      const [next, result] = change({ current, discarded, lostRecords });
      const tmp = `${file}.${randomBytes(8).toString('hex')}.tmp`;
      await this._create(tmp, JSON.stringify(next));
      await rename(tmp, file);
      return result;
    } finally {
      await unlink(lock).catch(() => undefined); // broken by another process as stale: nothing to release
    }
  }

  /** Delete state files (and stale locks, temporaries, markers) untouched for longer than `maxAgeMillis`. */
  async sweep(): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return 0;
    }
    let removed = 0;
    const cutoff = this._now() - this._o.maxAgeMillis;
    for (const name of names.slice(0, SWEEP_LIMIT)) {
      if (!NAME.test(name)) continue;
      const path = join(this.dir, name);
      try {
        if ((await lstat(path)).mtimeMs < cutoff) {
          await unlink(path);
          removed += 1;
        }
      } catch {
        // raced with another hook
      }
    }
    return removed;
  }

  /** Create the directory (0700), or check an existing one: a real directory, ours, not writable by others. */
  private async _ensureDir(): Promise<void> {
    if (this._checked) return;
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const st = await lstat(this.dir);
    if (!st.isDirectory()) throw new UnsafeStateDirError('the state directory is a symbolic link or not a directory');
    const uid = process.getuid?.();
    if (uid !== undefined && st.uid !== uid) throw new UnsafeStateDirError('the state directory belongs to another user');
    if ((st.mode & 0o022) !== 0) throw new UnsafeStateDirError('the state directory is writable by group or others (chmod 700 it)');
    this._checked = true;
  }

  /** Create a new file (never an existing one, never through a symbolic link) with `text`, mode 0600. */
  private async _create(path: string, text: string): Promise<void> {
    const h = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      await h.writeFile(text);
    } finally {
      await h.close();
    }
  }

  private async _takeLost(file: string): Promise<number> {
    const prefix = `${file.slice(this.dir.length + 1)}.`;
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return 0;
    }
    let lost = 0;
    for (const name of names) {
      if (!name.startsWith(prefix) || !name.endsWith('.lost') || !NAME.test(name)) continue;
      await unlink(join(this.dir, name)).catch(() => undefined);
      lost += 1;
      if (lost >= LOST_LIMIT) break;
    }
    return lost;
  }

  private async _read(file: string): Promise<Pick<HookStateRead, 'current' | 'discarded'>> {
    let h;
    try {
      h = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (err) {
      return { current: undefined, discarded: (err as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : 'unreadable' };
    }
    try {
      const st = await h.stat();
      if (!st.isFile()) return { current: undefined, discarded: 'unreadable' };
      if (st.mtimeMs < this._now() - this._o.maxAgeMillis) return { current: undefined, discarded: undefined };
      if (st.size > this._o.maxFileBytes) return { current: undefined, discarded: 'too_large' };
      return { current: JSON.parse(await h.readFile('utf8')) as unknown, discarded: undefined };
    } catch {
      return { current: undefined, discarded: 'unreadable' };
    } finally {
      await h.close();
    }
  }

  private async _lock(lock: string): Promise<boolean> {
    const deadline = this._now() + this._o.lockTimeoutMillis;
    for (let attempt = 0; ; attempt++) {
      try {
        await this._create(lock, '');
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      try {
        if ((await lstat(lock)).mtimeMs < this._now() - this._o.staleLockMillis) {
          await unlink(lock);
          continue;
        }
      } catch {
        continue; // released meanwhile
      }
      if (this._now() >= deadline) return false;
      await sleep(Math.min(2 + attempt, 20));
    }
  }
}
