// Which CustomResourceDefinitions decide admission of the objects the scanner reads.

const NODECLASS_CRD_NAME = 'ec2nodeclasses.karpenter.k8s.aws';
const NODEPOOL_CRD_NAME = 'nodepools.karpenter.sh';
export const KARPENTER_CRD_NAMES = [NODECLASS_CRD_NAME, NODEPOOL_CRD_NAME] as const;
export type KarpenterCrdName = (typeof KARPENTER_CRD_NAMES)[number];

/** The group/version CRDs are served as (v1beta1 was removed in Kubernetes 1.22). */
const CRD_API_VERSION = 'apiextensions.k8s.io/v1';

/** The CRD's name when `value` is one of Karpenter's two CRDs, else undefined. */
export function karpenterCrdNameOf(value: unknown): KarpenterCrdName | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const record = value as { kind?: unknown; apiVersion?: unknown; metadata?: unknown };
  if (record.kind !== 'CustomResourceDefinition' || record.apiVersion !== CRD_API_VERSION) {
    return undefined;
  }
  const name = (record.metadata as { name?: unknown } | undefined)?.name;
  return KARPENTER_CRD_NAMES.find((candidate) => candidate === name);
}

/** Where `ClusterCrds` holds a CRD of this name: `nodeClass`, `nodePool`, or none. */
export function crdSlot(name: string): 'nodeClass' | 'nodePool' | undefined {
  if (name === NODECLASS_CRD_NAME) return 'nodeClass';
  return name === NODEPOOL_CRD_NAME ? 'nodePool' : undefined;
}
