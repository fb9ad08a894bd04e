/**
 * What every command shares: where it writes, and the error that means "the user's input or
 * flags are wrong" (exit code 2, printed without a stack trace).
 */

/** Where the command writes. */
export interface CommandIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  /** Standard input, for `-` arguments. @defaultValue `process.stdin` */
  readonly stdin?: AsyncIterable<Buffer | string>;
  /** Progress on a terminal only. */
  readonly progress?: (text: string) => void;
}

/** A user error: printed without a stack trace, exit code 2. */
export class UserError extends Error {
  override readonly name = 'UserError';
}
