// Synthesizes the app once for every scenario (real esbuild bundles). With DEPLOY_SIM_ASSEMBLY=DIR
// the first run synthesizes into DIR and later runs reuse it (for iterating on one scenario).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { synthesize } from './simulation.js';

declare module 'vitest' {
  export interface ProvidedContext {
    assemblyDirectory: string;
  }
}

export default function setup(project: TestProject): () => void {
  const reuse = process.env.DEPLOY_SIM_ASSEMBLY;
  if (reuse) {
    if (!existsSync(join(reuse, 'manifest.json'))) {
      mkdirSync(reuse, { recursive: true });
      synthesize(reuse);
    }
    project.provide('assemblyDirectory', reuse);
    return () => {};
  }
  const outdir = mkdtempSync(join(tmpdir(), 'nodeclass-scanner-deploy-'));
  synthesize(outdir);
  project.provide('assemblyDirectory', outdir);
  return () => rmSync(outdir, { recursive: true, force: true });
}
