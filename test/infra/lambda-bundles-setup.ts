// Vitest global setup: a test that builds NodeClassScanner with neither the lambdaBundlesDirectory
// prop nor the context key deploys the package's dist/lambda, so it must exist on a clean clone.
// Built once per run, and only when absent: not rebuilding keeps the run from racing the real
// synth (synth.test.ts), which rebuilds in place. Template tests should use the stub bundles
// instead (support.ts: STUB_LAMBDA_BUNDLES), which nothing rewrites.
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
