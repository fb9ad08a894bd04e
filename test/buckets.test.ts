import { expect, it } from 'vitest';
import { batchCountBucket, failureCountBucket } from '../src/core/buckets.js';

it.each([
  [0, '0'], [-1, '0'], [Number.NaN, '0'], [1, '1-2'], [2, '1-2'], [3, '3-4'], [4, '3-4'], [5, '5-7'], [7, '5-7'], [8, '8+'], [140, '8+'],
])('failureCountBucket(%d) = %s', (n, b) => {
  expect(failureCountBucket(n)).toBe(b);
});

it.each([
  [0, '0'], [-3, '0'], [1, '1'], [2, '2'], [3, '3+'], [50, '3+'],
])('batchCountBucket(%d) = %s', (n, b) => {
  expect(batchCountBucket(n)).toBe(b);
});
