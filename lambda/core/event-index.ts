// The inventory index the event handlers use to re-evaluate only what an event can affect: per
// NodeClass, its AMI selector terms (and the AMIs Karpenter last resolved), its node role or
// instance profile, and its cluster's controller role.
import type { Image } from './facts/aws.js';
import { bareIamName } from './iam/arns.js';
import { resolveControllerRole } from './iam/controller-role.js';
import type { Inventory } from './inventory.js';
import { clusterOf } from './inventory.js';
import type { AmiSelectorTerm } from './schema.js';

export interface NodeClassIndexEntry {
  /** The cluster's name. */
  readonly cluster: string;
  /** The cluster's account (the service stores it; absent on entries of an earlier version). */
  readonly account?: string;
  /**
   * The cluster's region, so an event-driven rescan reads the right region (the home region when
   * absent: entries an earlier version stored without it).
   */
  readonly region?: string;
  readonly name: string;
  readonly amiSelectorTerms: readonly AmiSelectorTerm[];
  /** `status.amis[].id`: what Karpenter resolved last (covers alias terms and deregistered images). */
  readonly resolvedAmiIds: readonly string[];
  /** `spec.role` as written (role mode). */
  readonly nodeRole?: string;
  /** `spec.instanceProfile` as written (instance-profile mode). */
  readonly instanceProfile?: string;
  readonly controllerRoleArn?: string;
}

export interface NodeClassRef {
  readonly cluster: string;
  readonly name: string;
  readonly region?: string;
}

/** `image` selected by `term`? Core's `imageMatchesTerm` in production, injected for testability. */
export type ImageTermMatcher = (
  image: Image,
  term: AmiSelectorTerm,
  context: { readonly resolvedImageIds?: ReadonlySet<string>; readonly accountId?: string }
) => boolean;

/** Index entries for every NodeClass that parsed (an unparsable one has nothing to match on). */
export function indexEntriesOf(inventory: Inventory): NodeClassIndexEntry[] {
  const entries: NodeClassIndexEntry[] = [];
  for (const entry of inventory.nodeClasses) {
    if (!entry.parsed.ok) continue;
    const nodeClass = entry.parsed.value;
    const cluster = clusterOf(inventory, entry.cluster);
    const controller = cluster ? resolveControllerRole(cluster) : undefined;
    entries.push({
      cluster: entry.cluster,
      ...(cluster?.region ? { region: cluster.region } : {}),
      name: entry.name,
      amiSelectorTerms: nodeClass.spec.amiSelectorTerms,
      resolvedAmiIds: (nodeClass.status?.amis ?? []).map((ami) => ami.id),
      ...(nodeClass.spec.role ? { nodeRole: nodeClass.spec.role } : {}),
      ...(nodeClass.spec.instanceProfile
        ? { instanceProfile: nodeClass.spec.instanceProfile }
        : {}),
      ...(controller?.status === 'found' ? { controllerRoleArn: controller.roleArn } : {}),
    });
  }
  return entries;
}

/**
 * NodeClasses an AMI state change can affect: those whose last resolved AMIs include it, and those
 * with a term that selects it. `image` is undefined when DescribeImages no longer lists the image
 * (deregistered or disabled): then only id terms and resolved ids can match.
 */
export function affectedByImage(
  entries: readonly NodeClassIndexEntry[],
  imageId: string,
  image: Image | undefined,
  matches: ImageTermMatcher,
  /** The account the event came from: what an `owner: self` term means. */
  accountId?: string
): NodeClassIndexEntry[] {
  return entries.filter((entry) => {
    const resolved = new Set(entry.resolvedAmiIds);
    if (resolved.has(imageId)) return true;
    const subject: Image = image ?? { id: imageId, state: 'unknown', tags: {} };
    return entry.amiSelectorTerms.some((term) => {
      // Without the image, only an id term can be judged: a name/tag term would match or miss blindly.
      if (image === undefined && term.id === undefined) return false;
      return matches(subject, term, {
        resolvedImageIds: resolved,
        ...(accountId === undefined ? {} : { accountId }),
      });
    });
  });
}

/** Last path segment of an IAM name, path or ARN, lower-cased (IAM names are case-insensitive). */
export function iamNameKey(value: string): string {
  return bareIamName(value).toLowerCase();
}

/**
 * NodeClasses whose node role (by name, or through its instance profile) or controller role is one
 * of the changed roles, or whose instance profile changed.
 */
export function affectedByIam(
  entries: readonly NodeClassIndexEntry[],
  change: {
    readonly roleNames: readonly string[];
    readonly instanceProfileNames: readonly string[];
  }
): NodeClassIndexEntry[] {
  const roles = new Set(change.roleNames.map(iamNameKey));
  const profiles = new Set(change.instanceProfileNames.map(iamNameKey));
  return entries.filter(
    (entry) =>
      (entry.nodeRole !== undefined && roles.has(iamNameKey(entry.nodeRole))) ||
      (entry.controllerRoleArn !== undefined && roles.has(iamNameKey(entry.controllerRoleArn))) ||
      (entry.instanceProfile !== undefined && profiles.has(iamNameKey(entry.instanceProfile)))
  );
}
