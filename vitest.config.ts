import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The deployment simulation has its own config (vitest.deploy.config.ts, npm run test:deploy).
    exclude: [...configDefaults.exclude, 'test/deploy/**'],
    setupFiles: ['test/support/setup.ts'],
    // The package's prebuilt Lambda bundles, for the construct's default (built once, when absent).
    globalSetup: ['test/infra/lambda-bundles-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
