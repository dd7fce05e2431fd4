// Synthesizes the CDK app as `cdk synth` would: cdk.json's app command (builds the Lambda bundles,
// then runs the app on them) into a directory, with extra context over cdk.json's, for the
// cold-start benchmark, which measures the assets as deployed.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export function synthesizeApp(
  root: string,
  outdir: string,
  context: Readonly<Record<string, unknown>>
): void {
  const cdkJson = JSON.parse(readFileSync(join(root, 'cdk.json'), 'utf8')) as {
    app: string;
    context: Record<string, unknown>;
  };
  // No AWS or CDK variable of the caller leaks in: synth must not depend on a profile.
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('AWS_') && !key.startsWith('CDK_')) env[key] = value;
  }
  // The CDK CLI runs a string app command through a shell too.
  const result = spawnSync(cdkJson.app, {
    shell: true,
    cwd: root,
    encoding: 'utf8',
    timeout: 240_000,
    env: {
      ...env,
      AWS_EC2_METADATA_DISABLED: 'true',
      CDK_OUTDIR: outdir,
      CDK_CONTEXT_JSON: JSON.stringify({
        ...cdkJson.context,
        ...context,
        'aws:cdk:enable-path-metadata': true,
        'aws:cdk:enable-asset-metadata': true,
      }),
    },
  });
  if (result.status !== 0) {
    throw new Error(`synth failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  }
}
