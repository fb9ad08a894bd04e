/**
 * Low-cardinality buckets used as telemetry labels. Source: design "Telemetry and privacy";
 * in-tree values of `failure_count_bucket` and `batch_count_bucket`.
 */

/** `failure_count_bucket` values. */
export type FailureCountBucket = '0' | '1-2' | '3-4' | '5-7' | '8+';

/** `batch_count_bucket` values. */
export type BatchCountBucket = '0' | '1' | '2' | '3+';

/** Bucket a failure count (`0`, `1-2`, `3-4`, `5-7`, `8+`). Negative or non-finite input gives `0`. */
export function failureCountBucket(count: number): FailureCountBucket {
  if (!(count >= 1)) return '0';
  if (count <= 2) return '1-2';
  if (count <= 4) return '3-4';
  if (count <= 7) return '5-7';
  return '8+';
}

/** Bucket a batch count (`0`, `1`, `2`, `3+`). Negative or non-finite input gives `0`. */
export function batchCountBucket(count: number): BatchCountBucket {
  if (!(count >= 1)) return '0';
  if (count < 2) return '1';
  if (count < 3) return '2';
  return '3+';
}
