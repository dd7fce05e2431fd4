// Starts the run's one real `npx cdk synth` (synthesized-assembly.ts) and returns without waiting:
// the unit tests run meanwhile, the deployment's files wait for it. With DEPLOY_SIM_ASSEMBLY=DIR the
// first run synthesizes into DIR and later runs reuse it, unless that synth failed (for iterating on
// one scenario).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { reuseAssembly, startSynth } from './synthesized-assembly.js';

export default function setup(project: TestProject): () => Promise<void> {
  const reuse = process.env.DEPLOY_SIM_ASSEMBLY;
  if (reuse !== undefined && reuse !== '') {
    project.provide('assemblyDirectory', reuse);
    if (reuseAssembly(reuse)) return async () => {};
    mkdirSync(reuse, { recursive: true });
    return startSynth(reuse);
  }
  const outdir = mkdtempSync(join(tmpdir(), 'nodeclass-scanner-synth-'));
  project.provide('assemblyDirectory', outdir);
  const stopSynth = startSynth(outdir);
  return async () => {
    await stopSynth();
    rmSync(outdir, { recursive: true, force: true });
  };
}
