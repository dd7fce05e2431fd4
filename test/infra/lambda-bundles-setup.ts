// Vitest global setup: the construct deploys prebuilt Lambda bundles (`Code.fromAsset`), so the
// template tests need dist/lambda to exist. Built once per run, and only when absent: template
// tests read no bundle content, and not rebuilding avoids racing a concurrent `cdk synth` that
// rebuilds them. The real synth (synth.test.ts, via cdk.json) always rebuilds.
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
