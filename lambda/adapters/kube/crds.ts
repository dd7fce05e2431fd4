// Karpenter's installed CRDs, read through the Kubernetes API: the API server admits objects by
// them, so the scanner evaluates with the same documents. A CRD that cannot be read leaves the
// built-in rules to decide, and says why.
import {
  crdSlot,
  KARPENTER_CRD_NAMES,
  type KarpenterCrdName,
} from '../../core/admission/crd-names.js';
import type { ClusterCrds, CrdDocument } from '../../core/admission/types.js';
import { redactSecrets } from '../../core/redact.js';
import type { KubeClient } from './kube-client.js';
import { KubeApiError } from './kube-errors.js';
import { CustomResourceDefinitionSchema } from './schemas.js';

const CRDS_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** The API path of one CRD (RBAC grants `get` on exactly these names). */
function crdPath(name: KarpenterCrdName): string {
  return `${CRDS_PATH}/${name}`;
}

/**
 * A CRD as kept: without `managedFields`, the last-applied annotation (a second copy of the
 * whole document) and `status`, none of which admission reads.
 */
export function recordableCrd(document: unknown): unknown {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    return document;
  }
  const { status: _status, ...rest } = document as Record<string, unknown>;
  const copy = structuredClone(rest);
  const metadata = copy.metadata as Record<string, unknown> | undefined;
  if (metadata && typeof metadata === 'object') {
    delete metadata.managedFields;
    const annotations = metadata.annotations as Record<string, unknown> | undefined;
    if (annotations && typeof annotations === 'object') delete annotations[LAST_APPLIED];
  }
  return copy;
}

type Outcome =
  | { readonly name: KarpenterCrdName; readonly crd: CrdDocument }
  | { readonly name: KarpenterCrdName; readonly problem: string; readonly denied: boolean };

function problemOf(name: KarpenterCrdName, error: unknown): Outcome {
  const message = redactSecrets(error instanceof Error ? error.message : String(error));
  const status = error instanceof KubeApiError ? error.httpStatus : undefined;
  if (status === 403) {
    return {
      name,
      denied: true,
      problem: `the CRD ${name} may not be read (HTTP 403: RBAC lacks get on customresourcedefinitions "${name}")`,
    };
  }
  if (status === 404) {
    return { name, denied: false, problem: `the CRD ${name} is not served (HTTP 404)` };
  }
  return { name, denied: false, problem: `the CRD ${name} could not be read: ${message}` };
}

/**
 * Reads both CRDs (in parallel). Never throws: what cannot be read is named in `unavailable`,
 * and the objects of that kind are judged by the built-in rules.
 */
export async function readInstalledCrds(kube: KubeClient, cluster: string): Promise<ClusterCrds> {
  const outcomes = await Promise.all(
    KARPENTER_CRD_NAMES.map(async (name): Promise<Outcome> => {
      try {
        const document = await kube.get(crdPath(name), CustomResourceDefinitionSchema);
        if (document.metadata.name !== name) {
          return {
            name,
            denied: false,
            problem: `the CRD read as ${name} is named ${document.metadata.name}`,
          };
        }
        const origin = { kind: 'cluster' as const, location: `cluster ${cluster}` };
        return { name, crd: { name, document: recordableCrd(document), origin } };
      } catch (error) {
        return problemOf(name, error);
      }
    })
  );
  const crds: { nodeClass?: CrdDocument; nodePool?: CrdDocument } = {};
  const problems: string[] = [];
  let denied = false;
  for (const outcome of outcomes) {
    const slot = crdSlot(outcome.name);
    if ('crd' in outcome && slot !== undefined) crds[slot] = outcome.crd;
    else if ('problem' in outcome) {
      problems.push(outcome.problem);
      denied ||= outcome.denied;
    }
  }
  return {
    ...crds,
    ...(problems.length === 0 ? {} : { unavailable: problems.join('; ') }),
    ...(denied ? { denied } : {}),
  };
}
