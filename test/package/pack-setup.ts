// Vitest global setup: a directory where the run's one `npm pack` happens (test/package/pack.ts),
// removed with the tarball after the run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    packDirectory?: string;
  }
}

export default function setup(project: TestProject): () => void {
  const directory = mkdtempSync(join(tmpdir(), 'nodeclass-scanner-pack-'));
  project.provide('packDirectory', directory);
  return () => rmSync(directory, { recursive: true, force: true });
}
