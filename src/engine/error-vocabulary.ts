/**
 * Closed vocabularies of execution error types. Each wire profile declares the values its agent
 * really writes (qwen-code: the ToolErrorType values); {@link classifyExecutionErrorType} maps a
 * raw value onto that vocabulary when a batch is sealed, and {@link executionErrorTypeLabel} gives
 * the only label the guard may emit for it. Anything outside the vocabulary is emitted as
 * {@link OTHER_EXECUTION_ERROR_TYPE}; the reducer still tells two such values apart through a
 * digest of the raw value, held in memory only.
 */
import { createHash } from 'node:crypto';

/** The emitted label of every execution error type outside the profile's vocabulary. */
export const OTHER_EXECUTION_ERROR_TYPE = 'other';

/** Prefix of the in-memory key of a value outside the vocabulary: `other#<digest>`. */
const OTHER_KEY_PREFIX = `${OTHER_EXECUTION_ERROR_TYPE}#`;

/**
 * Shape of a classification: a lower-case identifier (the ToolErrorType shape, wire reference §3).
 * Free text (a message, a path) is never one and stays unclassified.
 */
const IDENTIFIER = /^[a-z][a-z0-9_]{0,63}$/;

/** A profile's closed vocabulary of execution error types. */
export type ExecutionErrorVocabulary = ReadonlySet<string>;

/**
 * The reducer key of a raw execution error type.
 *
 * - a value of the vocabulary, or `unknown` (the design's unclassified value): itself;
 * - another identifier-shaped value: `other#<digest>` (the first 64 bits of its SHA-256, base64url),
 *   so that two different unlisted values still make different keys, and the raw text is not kept;
 * - anything else (free text, empty, too long): `undefined`, i.e. unclassified.
 *
 * Without a vocabulary (`undefined`), identifier-shaped values are kept as they are; the guard
 * always passes its profile's vocabulary, so what it emits stays closed.
 */
export function classifyExecutionErrorType(raw: string | undefined, vocabulary: ExecutionErrorVocabulary | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (raw === 'unknown' || vocabulary?.has(raw) === true) return raw;
  if (!IDENTIFIER.test(raw)) return undefined;
  // No vocabulary at this layer (a bare engine, tests): identifiers are kept; the guard facade always passes one.
  if (vocabulary === undefined) return raw;
  return `${OTHER_KEY_PREFIX}${createHash('sha256').update(raw, 'utf8').digest().subarray(0, 8).toString('base64url')}`;
}

/**
 * The label to emit for a reducer key: the key itself when it is a vocabulary value, else
 * {@link OTHER_EXECUTION_ERROR_TYPE}. With a vocabulary it checks membership; without one it relies
 * on the key having come from {@link classifyExecutionErrorType}. Never returns a raw digest.
 */
export function executionErrorTypeLabel(key: string, vocabulary?: ExecutionErrorVocabulary): string {
  if (key.startsWith(OTHER_KEY_PREFIX)) return OTHER_EXECUTION_ERROR_TYPE;
  if (vocabulary !== undefined && !vocabulary.has(key) && key !== 'unknown') return OTHER_EXECUTION_ERROR_TYPE;
  return IDENTIFIER.test(key) ? key : OTHER_EXECUTION_ERROR_TYPE;
}
