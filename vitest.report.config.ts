import { defineConfig } from 'vitest/config';

// The report opened in a real headless Chromium (Debian's `chromium`; scripts/install-chromium.sh).
export default defineConfig({
  test: {
    include: ['test/browser/**/*.browser.test.ts'],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
