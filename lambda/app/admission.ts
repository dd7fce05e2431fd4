// Admission as the cluster's own Karpenter decides it: when a scan has Karpenter's installed CRDs
// (read live, recorded in a world file, found among manifests, or given with --crd), each
// NodeClass and NodePool gets the CRD's verdict before the checks run. The CRD engine is imported
// only then: a scan without any CRD never loads it.
import type {
  AdmissionVerdict,
  ClusterCrds,
  CrdAdmission,
  CrdDocument,
} from '../core/admission/types.js';
import type { ClusterContext, Inventory } from '../core/inventory.js';
import { redactSecrets } from '../core/redact.js';
import type { InputError } from '../core/report.js';

/** lambda/adapters/admission/load.ts `loadAdmission`. */
export type LoadAdmission = (crd: CrdDocument) => Promise<CrdAdmission | { error: string }>;

/** The engine's loader, imported on first use. */
export type AdmissionEngine = () => Promise<LoadAdmission>;

const defaultAdmissionEngine: AdmissionEngine = async () =>
  (await import('../adapters/admission/load.js')).loadAdmission;

type Slot = 'nodeClass' | 'nodePool';
const SLOTS: readonly Slot[] = ['nodeClass', 'nodePool'];

function messageOf(error: unknown): string {
  return redactSecrets(error instanceof Error ? error.message : String(error));
}

/**
 * Loads each distinct CRD once, however many clusters installed the same document; each cluster's
 * verdicts still name its own copy.
 */
function cachedLoader(load: LoadAdmission) {
  const loaded = new Map<
    string,
    { readonly from: CrdDocument; readonly admission: Promise<CrdAdmission | { error: string }> }
  >();
  return async (crd: CrdDocument): Promise<CrdAdmission | { error: string }> => {
    const key = `${crd.name}\u0000${JSON.stringify(crd.document)}`;
    let cached = loaded.get(key);
    if (cached === undefined) {
      const admission = load(crd).catch((error: unknown) => ({ error: messageOf(error) }));
      cached = { from: crd, admission };
      loaded.set(key, cached);
    }
    const admission = await cached.admission;
    const from = cached.from.origin.location;
    if ('error' in admission || from === crd.origin.location) return admission;
    const relabel = (label: string) => label.split(from).join(crd.origin.location);
    return {
      crd: relabel(admission.crd),
      review: (object) => {
        const verdict = admission.review(object);
        return { ...verdict, crd: relabel(verdict.crd) };
      },
    };
  };
}

interface ClusterAdmission {
  readonly context: ClusterContext;
  readonly reviewers: Partial<Record<Slot, (object: unknown) => AdmissionVerdict | undefined>>;
  readonly problems: { readonly crd: CrdDocument; readonly message: string }[];
}

function hasCrd(crds: ClusterCrds | undefined): boolean {
  return crds?.nodeClass !== undefined || crds?.nodePool !== undefined;
}

async function clusterAdmission(
  cluster: ClusterContext,
  load: (crd: CrdDocument) => Promise<CrdAdmission | { error: string }>
): Promise<ClusterAdmission> {
  const crds = cluster.crds;
  const problems: ClusterAdmission['problems'] = [];
  const reviewers: ClusterAdmission['reviewers'] = {};
  for (const slot of SLOTS) {
    const crd = crds?.[slot];
    if (crd === undefined) continue;
    const admission = await load(crd);
    if ('error' in admission) {
      problems.push({ crd, message: `cannot be evaluated: ${admission.error}` });
      continue;
    }
    let failed = false;
    reviewers[slot] = (object) => {
      try {
        return admission.review(object);
      } catch (error) {
        // One report per CRD: the engine failing on one object fails on its like too.
        if (!failed) problems.push({ crd, message: `failed on an object: ${messageOf(error)}` });
        failed = true;
        return undefined;
      }
    };
  }
  return { context: cluster, reviewers, problems };
}

function described(crd: CrdDocument, message: string): string {
  return `the CRD ${crd.name} from ${crd.origin.location} ${message}`;
}

/** The cluster with what could not be used added to `crds.unavailable`. */
function withProblems(cluster: ClusterContext, problems: ClusterAdmission['problems']) {
  if (problems.length === 0 || cluster.crds === undefined) return cluster;
  const unavailable = [
    ...(cluster.crds.unavailable === undefined ? [] : [cluster.crds.unavailable]),
    ...problems.map((problem) => described(problem.crd, problem.message)),
  ].join('; ');
  return { ...cluster, crds: { ...cluster.crds, unavailable } };
}

/**
 * Sets `admission` on every NodeClass and NodePool of a cluster that has the CRD of its kind
 * (objects of an apiVersion the CRD does not serve get that violation from the engine). A CRD that
 * cannot be used leaves its objects to the built-in rules and is named in `crds.unavailable`;
 * where no cluster-state check reports it (manifest scans), also as an input error.
 */
export async function applyAdmission(
  inventory: Inventory,
  engine: AdmissionEngine = defaultAdmissionEngine
): Promise<{ readonly inventory: Inventory; readonly inputErrors: readonly InputError[] }> {
  if (!inventory.clusters.some((cluster) => hasCrd(cluster.crds))) {
    return { inventory, inputErrors: [] };
  }
  let load: LoadAdmission;
  try {
    load = await engine();
  } catch (error) {
    // The engine itself is missing or broken: every CRD falls back, and says why.
    const reason = `the admission engine did not load (${messageOf(error)})`;
    load = async () => ({ error: reason });
  }
  const cached = cachedLoader(load);
  const admissions = new Map<string, ClusterAdmission>();
  for (const cluster of inventory.clusters) {
    if (hasCrd(cluster.crds)) admissions.set(cluster.name, await clusterAdmission(cluster, cached));
  }
  const review = (cluster: string, slot: Slot, object: unknown) =>
    admissions.get(cluster)?.reviewers[slot]?.(object);
  const nodeClasses = inventory.nodeClasses.map((entry) => {
    const admission = review(entry.cluster, 'nodeClass', entry.raw);
    return admission === undefined ? entry : { ...entry, admission };
  });
  const nodePools = inventory.nodePools.map((entry) => {
    const object = entry.raw ?? (entry.parsed.ok ? entry.parsed.value : undefined);
    const admission = review(entry.cluster, 'nodePool', object);
    return admission === undefined ? entry : { ...entry, admission };
  });
  // After the reviews: an engine failure on an object is one of the problems.
  const clusters = inventory.clusters.map((cluster) => {
    const admission = admissions.get(cluster.name);
    return admission === undefined ? cluster : withProblems(cluster, admission.problems);
  });
  const reportedByCheck = inventory.inputs.has('cluster');
  const inputErrors: InputError[] = [...admissions.values()].flatMap(({ context, problems }) =>
    reportedByCheck && context.name !== ''
      ? []
      : problems.map((problem) => ({
          source: problem.crd.origin.location,
          message: `${described(problem.crd, problem.message)}; the built-in rules decide instead`,
        }))
  );
  return { inventory: { ...inventory, clusters, nodeClasses, nodePools }, inputErrors };
}
