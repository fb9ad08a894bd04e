import { defineConfig } from 'vitest/config';

// Scale-out end to end: a front collector, 3 serve replicas (child processes) and an ops collector
// on loopback; builds the collector with Go on first use (npm run test:scale-out).
export default defineConfig({
  test: {
    include: ['test/scale-out/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 600_000,
    teardownTimeout: 30_000,
  },
});
