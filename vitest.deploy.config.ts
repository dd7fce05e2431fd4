import { defineConfig } from 'vitest/config';

// The synthesized deployment (npm run test:deploy): one real `npx cdk synth`, started by global
// setup; its checks (synth.test.ts) and the simulation's scenarios, in order.
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
