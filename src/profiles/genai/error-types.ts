/**
 * The closed vocabulary of execution error types the `genai` profile emits, and how a raw
 * `error.type` (or recorded `exception.type`) becomes a failure-key token.
 *
 * `error.type` is free-form on the wire (an exception's fully-qualified class name, an HTTP status,
 * a producer's own code). The guard must never emit raw strings, yet must keep different raw types
 * apart so that two different failures are never counted as the same key. So:
 *
 * - a raw type on the allowlist becomes its vocabulary value (`FileNotFoundError`, `ENOENT` →
 *   `file_not_found`), which is both the key and the emitted value;
 * - any other raw type becomes `genai_other_<8 hex>` (FNV-1a of the raw string): a distinct private
 *   key, emitted as `other` ({@link emittedErrorType});
 * - `_OTHER` (the conventions' "unclassified") and cancellations are not error types at all (see
 *   the profile).
 */
import { ERROR_TYPE_VALUE_OTHER } from './semconv.js';

/**
 * Emitted execution error types of the `genai` profile: the allowlist's values plus `other`.
 */
export const GENAI_ERROR_TYPES = [
  'file_not_found',
  'permission_denied',
  'is_a_directory',
  'not_a_directory',
  'file_exists',
  'timeout',
  'connection_error',
  'value_error',
  'type_error',
  'key_error',
  'index_error',
  'attribute_error',
  'runtime_error',
  'os_error',
  'not_implemented',
  'process_error',
  'tool_retry',
  'other',
] as const;

/** One emitted execution error type of the `genai` profile. */
export type GenAiErrorType = (typeof GENAI_ERROR_TYPES)[number];

/**
 * Allowlist: the last segment of a raw type (after the last `.` or `:`), exactly, to its
 * vocabulary value. Python builtins and common library exceptions, Node.js error codes, and
 * framework retry signals seen in the conformance runs.
 */
const ALLOWLIST: Readonly<Record<string, GenAiErrorType>> = {
  FileNotFoundError: 'file_not_found',
  NoSuchFileException: 'file_not_found',
  ENOENT: 'file_not_found',
  file_not_found: 'file_not_found',
  PermissionError: 'permission_denied',
  EACCES: 'permission_denied',
  EPERM: 'permission_denied',
  permission_denied: 'permission_denied',
  IsADirectoryError: 'is_a_directory',
  EISDIR: 'is_a_directory',
  NotADirectoryError: 'not_a_directory',
  ENOTDIR: 'not_a_directory',
  FileExistsError: 'file_exists',
  EEXIST: 'file_exists',
  TimeoutError: 'timeout',
  TimeoutException: 'timeout',
  ReadTimeout: 'timeout',
  ConnectTimeout: 'timeout',
  ETIMEDOUT: 'timeout',
  timeout: 'timeout',
  ConnectionError: 'connection_error',
  ConnectionRefusedError: 'connection_error',
  ConnectionResetError: 'connection_error',
  ConnectError: 'connection_error',
  ECONNREFUSED: 'connection_error',
  ECONNRESET: 'connection_error',
  ValueError: 'value_error',
  TypeError: 'type_error',
  KeyError: 'key_error',
  IndexError: 'index_error',
  RangeError: 'index_error',
  AttributeError: 'attribute_error',
  RuntimeError: 'runtime_error',
  OSError: 'os_error',
  IOError: 'os_error',
  NotImplementedError: 'not_implemented',
  CalledProcessError: 'process_error',
  SubprocessError: 'process_error',
  // pydantic-ai: a tool raised ModelRetry; the model is told and asked to try again.
  ToolRetryError: 'tool_retry',
  ModelRetry: 'tool_retry',
};

/** Prefix of private keys for raw types outside the allowlist. */
const OTHER_KEY_PREFIX = 'genai_other_';
const OTHER_KEY = /^genai_other_[0-9a-f]{8}$/;

/** 32-bit FNV-1a of a string's UTF-16 code units, as 8 hex digits. */
function fnv1a(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

/**
 * The failure-key token of a raw error type: its vocabulary value when allowlisted, else a private
 * `genai_other_<hash>` token. `undefined` for a missing or empty type and for `_OTHER`
 * (unclassified: the call's error is `unknown`).
 */
export function errorTypeKey(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const t = raw.trim();
  if (t === '' || t === ERROR_TYPE_VALUE_OTHER) return undefined;
  const last = t.slice(Math.max(t.lastIndexOf('.'), t.lastIndexOf(':')) + 1);
  return ALLOWLIST[last] ?? `${OTHER_KEY_PREFIX}${fnv1a(t)}`;
}

/**
 * What the guard may emit for an execution error type: a `genai` private key becomes `other`;
 * every other value (the vocabulary, other profiles' ToolErrorTypes) is returned unchanged.
 */
export function emittedErrorType(executionErrorType: string): string {
  return OTHER_KEY.test(executionErrorType) ? 'other' : executionErrorType;
}
