// Sorting parsed Kubernetes objects into Karpenter entries. Kept apart from the YAML parser so the
// Lambdas (which read JSON from the Kubernetes API) do not bundle it.
import type { CrdDocument } from '../../core/admission/types.js';
import type { NodeClassEntry, NodePoolEntry, SourceLocation } from '../../core/inventory.js';
import type { InputError } from '../../core/report.js';
import { parseEC2NodeClass, parseNodePool } from '../../core/schema.js';

export interface ParsedManifests {
  readonly nodeClasses: NodeClassEntry[];
  readonly nodePools: NodePoolEntry[];
  readonly errors: InputError[];
  /** Karpenter's CRDs found among the documents (a GitOps copy of the karpenter-crd chart). */
  readonly crds?: CrdDocument[];
}

export function isKarpenterObject(value: unknown): boolean {
  const { kind, apiVersion } = kindOf(value);
  return (
    (kind === 'EC2NodeClass' && apiVersion?.startsWith('karpenter.k8s.aws/') === true) ||
    (kind === 'NodePool' && apiVersion?.startsWith('karpenter.sh/') === true)
  );
}

export function kindOf(value: unknown): { kind?: string; apiVersion?: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  const record = value as Record<string, unknown>;
  return {
    ...(typeof record.kind === 'string' ? { kind: record.kind } : {}),
    ...(typeof record.apiVersion === 'string' ? { apiVersion: record.apiVersion } : {}),
  };
}

function nameOf(value: unknown): string | undefined {
  const metadata = (value as { metadata?: unknown }).metadata;
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  const name = (metadata as { name?: unknown }).name;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/** Sorts one Kubernetes object into the result; other kinds are ignored. */
export function addObject(
  result: ParsedManifests,
  value: unknown,
  cluster: string,
  source: SourceLocation | undefined,
  placeholder: string
): void {
  const { kind, apiVersion } = kindOf(value);
  if (kind === 'EC2NodeClass' && apiVersion?.startsWith('karpenter.k8s.aws/')) {
    result.nodeClasses.push({
      cluster,
      name: nameOf(value) ?? placeholder,
      apiVersion,
      raw: value,
      parsed: parseEC2NodeClass(value),
      ...(source ? { source } : {}),
    });
  } else if (kind === 'NodePool' && apiVersion?.startsWith('karpenter.sh/')) {
    result.nodePools.push({
      cluster,
      name: nameOf(value) ?? placeholder,
      raw: value,
      parsed: parseNodePool(value),
      ...(source ? { source } : {}),
    });
  }
}
