import type { UnavailableReason } from './facts/slice.js';
import type {
  CheckInput,
  ClusterContext,
  Inventory,
  NodeClassEntry,
  NodePoolEntry,
} from './inventory.js';
import { clusterOf } from './inventory.js';
import type { MaterialPath } from './material.js';
import type {
  CheckStatus,
  FindingLocation,
  ReadFault,
  ResourceKind,
  ResourceRef,
  Severity,
} from './model.js';
import { isRegionName, partitionOf } from './region.js';
import { type EC2NodeClass, NODEPOOL_API_VERSION, type NodePool } from './schema.js';
import { parseKarpenterVersion } from './version.js';

type CheckGroup = 'spec' | 'aws' | 'cluster';

/** Metadata that lives with each check; the README catalog is generated from it. */
export interface CheckMeta {
  /** Stable kebab-case ID stating the compliant condition; never renamed. */
  readonly id: string;
  readonly title: string;
  readonly group: CheckGroup;
  /** Default severity; a finding may override it (version-aware checks). */
  readonly severity: Severity;
  /** Inputs the check needs; it is not run when any of them was not collected. */
  readonly inputs: readonly CheckInput[];
  /** Inputs the check reads when they were collected, without needing them to run. */
  readonly uses?: readonly CheckInput[];
  /**
   * Why a violation matters: what Karpenter or EC2 does when the condition does not hold (which
   * call fails, which condition lies, what the nodes or pods end up doing), in 1–3 sentences for
   * users. Shown as "Why it matters" in SARIF rule help and listed by `checks --format json`.
   */
  readonly rationale: string;
  /** What to change, in general terms; findings may give a more exact one. */
  readonly remediation: string;
  /**
   * Public sources only: `#NNNN` (an aws/karpenter-provider-aws issue or pull request), an
   * `https://` URL, or a page of this repository's `docs/`. A test rejects anything else.
   */
  readonly references: readonly string[];
  /** Kinds of object the check reports on; EC2NodeClass when not given. */
  readonly scope?: readonly ResourceKind[];
  /**
   * Evidence paths whose values make a finding materially different (`material.ts`): which
   * subnets, images or actions fail — never counts, durations or timestamps. Status and severity
   * are always material. An empty list: only status and severity matter.
   */
  readonly material: readonly MaterialPath[];
}

/** The kinds of object a check reports on. */
export function scopeOf(check: CheckMeta): readonly ResourceKind[] {
  return check.scope ?? ['EC2NodeClass'];
}

/** The root finding a follow-on finding depends on: a check on a resource (default: the same). */
export interface RootCause {
  readonly checkId: string;
  readonly resource?: ResourceRef;
}

/** What a check returns; `evaluate` turns drafts into findings with ids and defaults. */
export interface FindingDraft {
  /**
   * `notice` when nothing is wrong but the reader should know something (expected behaviour that
   * looks like an error, advice while nothing fails): shown, never a failure, never alerted.
   */
  readonly status: CheckStatus;
  readonly resource: ResourceRef;
  readonly message: string;
  readonly severity?: Severity;
  readonly remediation?: string;
  readonly evidence?: Readonly<Record<string, unknown>>;
  /** Distinguishes several findings of one check on one resource (e.g. the JSON path). */
  readonly discriminator?: string;
  readonly location?: FindingLocation;
  /**
   * Set on a finding that only follows from another check's: an `error` that could not be
   * evaluated because that check failed, or a `fail` that restates it. The finding is linked to
   * that check's failing finding on the resource and never alerts on its own. Ignored when the
   * root check did not fail or error there.
   */
  readonly causedBy?: RootCause;
  /**
   * Set on an `error` that is one because an input could not be read in this scan (an unavailable
   * slice, or one never collected): the lifecycle then keeps the stored state as it was. Errors
   * that are conclusions (a condition key the scanner cannot know, a CEL rule not evaluated, an
   * invalid annotation, a crash) have none.
   */
  readonly readFault?: ReadFault | undefined;
}

/** The read fault of an unavailable slice, or of one the scan never collected (`undefined`). */
export function readFaultOf(
  input: string,
  slice: { readonly reason: UnavailableReason } | undefined
): ReadFault {
  return { reason: slice?.reason ?? 'not-collected', input };
}

/** How findings name the controller read (version, env and role come from it). */
const CONTROLLER_INPUT = 'the Karpenter controller Deployment';

/**
 * The read fault behind an unknown Karpenter version: the controller Deployment could not be read
 * (and neither the scan nor an annotation gave the version). Undefined when the version is known,
 * or simply not given (a manifest scan): version-aware checks then keep their worst-case verdict.
 */
export function versionReadFault(cluster: ClusterContext): ReadFault | undefined {
  return cluster.karpenterVersion === undefined ? controllerReadFault(cluster) : undefined;
}

/**
 * The read fault of the controller Deployment, whose env (feature gates) and version checks of
 * Karpenter's behaviour depend on; undefined when it was read or not looked at (a manifest scan).
 */
export function controllerReadFault(cluster: ClusterContext): ReadFault | undefined {
  const controller = cluster.state?.controller;
  return controller?.status === 'unavailable'
    ? readFaultOf(CONTROLLER_INPUT, controller)
    : undefined;
}

/**
 * The `error` a version-aware check reports instead of a verdict when the version (or the
 * controller's settings) is unknown because of a read fault: a worst-case verdict on a blip would
 * open or resolve alerts.
 */
export function versionUnreadDraft(
  resource: ResourceRef,
  fault: ReadFault,
  cluster: ClusterContext
): FindingDraft {
  return {
    status: 'error',
    resource,
    message: `Not evaluated: the verdict depends on Karpenter's version or settings, unknown because ${fault.input} could not be read (${fault.reason}).`,
    evidence: { reason: fault.reason, input: fault.input },
    readFault: fault,
    causedBy: {
      checkId: 'scanner-can-read-cluster',
      resource: { cluster: cluster.name, kind: 'Cluster', name: cluster.name },
    },
  };
}

export interface CheckContext {
  /** Scan time; checks never read the clock. */
  readonly now: Date;
}

export interface Check extends CheckMeta {
  evaluate(inventory: Inventory, context: CheckContext): readonly FindingDraft[];
}

/** Build resource refs only through these: they carry the origin that tells same names apart. */
export function nodeClassRef(entry: NodeClassEntry): ResourceRef {
  return {
    cluster: entry.cluster,
    kind: 'EC2NodeClass',
    name: entry.name,
    ...(entry.origin === undefined ? {} : { origin: entry.origin }),
  };
}

export function nodePoolRef(entry: NodePoolEntry): ResourceRef {
  return {
    cluster: entry.cluster,
    kind: 'NodePool',
    name: entry.name,
    ...(entry.origin === undefined ? {} : { origin: entry.origin }),
  };
}

/** The NodeClass being checked, with its cluster and its parsed object when it parsed. */
export interface NodeClassTarget {
  readonly entry: NodeClassEntry;
  readonly resource: ResourceRef;
  /** The effective cluster context: the cluster's, with this object's context annotations applied. */
  readonly cluster: ClusterContext;
  /** Context annotations that changed `cluster` for this object (see `effectiveCluster`). */
  readonly overrides: readonly ContextOverride[];
  readonly inventory: Inventory;
}

/**
 * Per-object context annotations. A GitOps repository often holds NodeClasses of many clusters;
 * these let each object say which region and Karpenter version it is deployed with.
 */
export const REGION_ANNOTATION = 'nodeclass-scanner/region';
export const KARPENTER_VERSION_ANNOTATION = 'nodeclass-scanner/karpenter-version';

export interface ContextOverride {
  readonly annotation: typeof REGION_ANNOTATION | typeof KARPENTER_VERSION_ANNOTATION;
  readonly value: string;
  /** False when the value is not a region / version; the override is then ignored. */
  readonly valid: boolean;
}

/**
 * How an invalid context annotation is reported. A region that is not one is an `error`: the
 * object is then checked as if in the cluster's region, so the checks of its real partition
 * (ISO, GovCloud) may be missing. A version that does not parse only loses version-aware nuance.
 */
export function invalidOverrideOutcome(
  override: ContextOverride
): { readonly status: 'error' } | { readonly status: 'fail'; readonly severity: 'low' } {
  return override.annotation === REGION_ANNOTATION
    ? { status: 'error' }
    : { status: 'fail', severity: 'low' };
}

/** The context annotations present on a NodeClass, valid or not. */
export function contextOverridesOf(nodeClass: EC2NodeClass): ContextOverride[] {
  const annotations = nodeClass.metadata.annotations ?? {};
  const overrides: ContextOverride[] = [];
  const region = annotations[REGION_ANNOTATION];
  if (region !== undefined) {
    overrides.push({ annotation: REGION_ANNOTATION, value: region, valid: isRegionName(region) });
  }
  const version = annotations[KARPENTER_VERSION_ANNOTATION];
  if (version !== undefined) {
    overrides.push({
      annotation: KARPENTER_VERSION_ANNOTATION,
      value: version,
      valid: parseKarpenterVersion(version) !== undefined,
    });
  }
  return overrides;
}

/**
 * The cluster context with the object's valid context annotations applied: the region annotation
 * sets region and partition, the version annotation the Karpenter version. Invalid values are
 * ignored here (nodeclass-schema-valid reports them).
 */
export function effectiveCluster(
  cluster: ClusterContext,
  nodeClass: EC2NodeClass
): { cluster: ClusterContext; overrides: ContextOverride[] } {
  const overrides = contextOverridesOf(nodeClass).filter((override) => override.valid);
  const annotationValue = (annotation: ContextOverride['annotation']) =>
    overrides.find((override) => override.annotation === annotation)?.value;
  const region = annotationValue(REGION_ANNOTATION);
  const karpenterVersion = parseKarpenterVersion(annotationValue(KARPENTER_VERSION_ANNOTATION));
  return {
    cluster: {
      ...cluster,
      ...(region === undefined ? {} : { region, partition: partitionOf(region) }),
      ...(karpenterVersion ? { karpenterVersion } : {}),
    },
    overrides,
  };
}

const NO_CLUSTER: ClusterContext = { name: '', partition: 'aws' };

/**
 * Runs `evaluateOne` for every NodeClass whose object parsed. NodeClasses that did not parse get
 * one `error` finding each, a follow-on of nodeclass-schema-valid (which reports the reasons), so
 * no NodeClass is skipped and one broken object raises one alert.
 * `target.cluster` is the effective context: the object's context annotations override the
 * cluster's region/partition and Karpenter version.
 */
export function forEachNodeClass(
  inventory: Inventory,
  evaluateOne: (nodeClass: EC2NodeClass, target: NodeClassTarget) => readonly FindingDraft[]
): FindingDraft[] {
  const drafts: FindingDraft[] = [];
  for (const entry of inventory.nodeClasses) {
    const resource = nodeClassRef(entry);
    if (!entry.parsed.ok) {
      drafts.push({
        status: 'error',
        resource,
        message:
          'Not evaluated: the object is not a valid karpenter.k8s.aws/v1 EC2NodeClass (see nodeclass-schema-valid).',
        evidence: { issues: entry.parsed.issues.slice(0, 5) },
        causedBy: { checkId: 'nodeclass-schema-valid' },
      });
      continue;
    }
    const nodeClass = entry.parsed.value;
    const { cluster, overrides } = effectiveCluster(
      clusterOf(inventory, entry.cluster) ?? { ...NO_CLUSTER, name: entry.cluster },
      nodeClass
    );
    const target = { entry, resource, cluster, overrides, inventory };
    drafts.push(...isolated(resource, () => evaluateOne(nodeClass, target)));
  }
  return drafts;
}

/**
 * One object's drafts; a check that throws on this object gives an `error` for it alone (with the
 * exception's class and message), so the other objects are still evaluated.
 */
function isolated(
  resource: ResourceRef,
  evaluateOne: () => readonly FindingDraft[]
): readonly FindingDraft[] {
  try {
    return evaluateOne();
  } catch (error) {
    const kind = error instanceof Error ? error.name : typeof error;
    const reason = error instanceof Error ? error.message : String(error);
    return [
      {
        status: 'error',
        resource,
        message: `Check failed to evaluate this object: ${kind}: ${reason}`,
        evidence: { exception: kind, reason },
      },
    ];
  }
}

/** The NodePool being checked, with its cluster context. */
export interface NodePoolTarget {
  readonly entry: NodePoolEntry;
  readonly resource: ResourceRef;
  readonly cluster: ClusterContext;
  readonly inventory: Inventory;
}

/**
 * Runs `evaluateOne` for every NodePool that parsed as karpenter.sh/v1. The others get one `error`
 * finding each, a follow-on of nodepool-schema-valid (which names what is wrong and where), so no
 * NodePool is skipped silently.
 */
export function forEachNodePool(
  inventory: Inventory,
  evaluateOne: (nodePool: NodePool, target: NodePoolTarget) => readonly FindingDraft[]
): FindingDraft[] {
  const drafts: FindingDraft[] = [];
  for (const entry of inventory.nodePools) {
    const resource = nodePoolRef(entry);
    const parsed = entry.parsed;
    if (!parsed.ok || parsed.value.apiVersion !== NODEPOOL_API_VERSION) {
      drafts.push({
        status: 'error',
        resource,
        message: `Not evaluated: the object is not a valid ${NODEPOOL_API_VERSION} NodePool (see nodepool-schema-valid).`,
        evidence: parsed.ok
          ? { apiVersion: parsed.value.apiVersion }
          : { issues: parsed.issues.slice(0, 5) },
        causedBy: { checkId: 'nodepool-schema-valid' },
      });
      continue;
    }
    const cluster = clusterOf(inventory, entry.cluster) ?? { ...NO_CLUSTER, name: entry.cluster };
    drafts.push(
      ...isolated(resource, () =>
        evaluateOne(parsed.value, { entry, resource, cluster, inventory })
      )
    );
  }
  return drafts;
}

/** Defines a check; keeps metadata and logic in one object literal with checked types. */
export function defineCheck(check: Check): Check {
  return check;
}
