import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The deployment simulation has its own config (vitest.deploy.config.ts, npm run test:deploy).
    exclude: [...configDefaults.exclude, 'test/deploy/**'],
    setupFiles: ['test/support/setup.ts'],
    // Prebuilt Lambda bundles for the template tests (built once, when absent).
    globalSetup: ['test/infra/lambda-bundles-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
