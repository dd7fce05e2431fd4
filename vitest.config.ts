import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';

const INCLUDE = ['test/**/*.test.ts'];
// The deployment simulation has its own config (vitest.deploy.config.ts, npm run test:deploy).
const EXCLUDE = [...configDefaults.exclude, 'test/deploy/**'];

// Most files share their worker's module cache (isolate: false): a fresh process per file cost
// about a second of CPU per file, more than most files' tests. A file that mocks modules or sets
// the environment before its imports (vi.mock, vi.hoisted) gets its own process, as do the files
// listed here, which run the real SDK clients that other files stub with aws-sdk-client-mock.
const NEEDS_OWN_PROCESS = [
  'test/adapters/aws/clients.test.ts',
  'test/adapters/aws/finding-store-migration.test.ts',
  'test/cli/credentials.test.ts',
  // Real EC2 clients against a local endpoint that never answers.
  'test/adapters/aws/client-timeouts.test.ts',
  'test/reliability/aws-deadline.test.ts',
  // Real DynamoDB clients against dynalite: another file's mockClient would stub their send.
  'test/adapters/aws/table-rate-budget.test.ts',
  'test/adapters/aws/finding-store-index-writes.test.ts',
  'test/adapters/aws/finding-store-batch.test.ts',
  'test/adapters/aws/finding-store-ambiguous.test.ts',
];
const isolated = readdirSync(join(import.meta.dirname, 'test'), {
  recursive: true,
  encoding: 'utf8',
})
  .map((file) => join('test', file))
  .filter((file) => file.endsWith('.test.ts') && !file.startsWith('test/deploy/'))
  .filter(
    (file) =>
      NEEDS_OWN_PROCESS.includes(file) ||
      /\bvi\.(mock|hoisted)\(/.test(readFileSync(join(import.meta.dirname, file), 'utf8'))
  )
  .sort();

export default defineConfig({
  test: {
    setupFiles: ['test/support/setup.ts'],
    globalSetup: [
      // One `npm pack` per run, shared by the package and action tests (test/package/pack.ts).
      'test/package/pack-setup.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Vitest's default (CPUs - 1) is one worker on a 2-core machine. The deployment's files hold a
    // worker each while they wait for the synth, then mostly wait on child processes (the Lambda
    // environments, npm); CPUs + 3 keeps both cores busy meanwhile (measured on 2 cores: + 1 was
    // 154 s, + 3 143 s, + 5 148 s with more module imports per worker).
    maxWorkers: availableParallelism() + 3,
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: INCLUDE,
          exclude: [...EXCLUDE, ...isolated],
          isolate: false,
        },
      },
      { extends: true, test: { name: 'isolated', include: isolated, exclude: EXCLUDE } },
      // The deployment simulation mostly waits (Lambda processes, SDK retry backoff): in the same
      // run it overlaps the unit tests (its one file's tests still run in order; fileParallelism
      // false would hold it back to a group of its own). Its global setup starts the one real
      // synth and returns; the unit tests run while it works.
      { extends: './vitest.deploy.config.ts', test: { name: 'deploy', fileParallelism: true } },
    ],
  },
});
