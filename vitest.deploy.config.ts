import { defineConfig } from 'vitest/config';

// The deployment simulation (npm run test:deploy): one synth in global setup, scenarios in order.
export default defineConfig({
  test: {
    include: ['test/deploy/**/*.test.ts'],
    setupFiles: ['test/support/setup.ts'],
    globalSetup: ['test/deploy/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
