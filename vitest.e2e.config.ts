import { defineConfig } from 'vitest/config';

// End-to-end tests against a real OpenTelemetry Collector; the first run builds it with Go.
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.e2e.test.ts'],
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 600_000,
    teardownTimeout: 30_000,
  },
});
