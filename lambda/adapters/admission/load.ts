// The one way product code reaches the CRD admission engine: dynamic imports, so the CEL and RE2
// engines (and the evaluator) sit in their own chunk and load only when a scan has a CRD.
import type { CrdAdmission, CrdDocument } from '../../core/admission/types.js';

export type { CrdAdmission } from '../../core/admission/types.js';

type Engines = Awaited<ReturnType<typeof importEngines>>;

async function importEngines() {
  const [{ createAdmissionEngines }, { compileCrdAdmission }] = await Promise.all([
    import('./engines.js'),
    import('../../core/admission/evaluate.js'),
  ]);
  return { engines: createAdmissionEngines(), compileCrdAdmission };
}

let loading: Promise<Engines> | undefined;

/**
 * The CRD compiled for admission (every pattern and CEL rule of its served versions compiled
 * once), or why it cannot be used: not a v1 CRD, or a rule or pattern the engines cannot compile.
 */
export async function loadAdmission(crd: CrdDocument): Promise<CrdAdmission | { error: string }> {
  loading ??= importEngines();
  const { engines, compileCrdAdmission } = await loading;
  return compileCrdAdmission(crd, engines);
}
