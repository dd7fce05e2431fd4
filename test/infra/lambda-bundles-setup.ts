// Vitest global setup: the construct's default deploys the package's prebuilt Lambda bundles
// (dist/lambda), which construct.test.ts synthesizes as a consumer would. Built once per run, and
// only when absent: those tests compare the staged copy with dist/lambda whatever its age, and not
// rebuilding keeps the run from racing the real synth (synth.test.ts), which rebuilds in place.
// Other template tests use stub bundles (support.ts).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  BUNDLE_ENTRY_FILE,
  defaultLambdaBundlesDirectory,
} from '../../infra/constructs/scanner-function.js';
import { HANDLER_NAMES } from '../../lambda/shared/config.js';
import { buildLambdaBundles } from '../../scripts/build-lambdas.js';

export default async function setup(): Promise<void> {
  const directory = defaultLambdaBundlesDirectory();
  const complete = HANDLER_NAMES.every((handler) =>
    existsSync(join(directory, handler, BUNDLE_ENTRY_FILE))
  );
  if (!complete) await buildLambdaBundles(directory);
}
