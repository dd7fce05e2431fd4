// The fields of Karpenter's v1 CRDs, for finding fields an object sets that its CRD does not have.
// Read from the structural schemas of pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml and
// karpenter.sh_nodepools.yaml at each release of aws/karpenter-provider-aws, v1.0.0 to v1.14.1
// (https://github.com/aws/karpenter-provider-aws/tree/v1.14.1/pkg/apis/crds); fields added after
// v1.0.0 carry the release that added them (no field was added in a patch release).
//
// The API server prunes fields a structural schema does not declare. How the client learns of it
// depends on its field validation (https://kubernetes.io/docs/reference/using-api/api-concepts/#field-validation):
// `Strict` rejects the request (kubectl's default: --validate=true means strict, checked by the API
// server since Kubernetes 1.25, by kubectl against the published schema before), `Warn` (the API
// server's default for clients that send none) accepts it with a warning and drops the field,
// `Ignore` drops it silently.

import { formatPath } from './schema.js';
import { didYouMean } from './suggest.js';
import { compareVersions, type KarpenterVersion, parseKarpenterVersion } from './version.js';

/** The shape of a value: which keys an object may hold, or what its items and values are. */
type Shape =
  | 'scalar'
  /** Any keys (x-kubernetes-preserve-unknown-fields). */
  | 'open'
  | { readonly fields: Readonly<Record<string, Field>> }
  | { readonly items: Shape }
  | { readonly values: Shape };

/** A declared field: its shape, and the release that added it when later than v1.0.0. */
type Field = Shape | { readonly shape: Shape; readonly since: string };

const S = 'scalar';
const OPEN = 'open';
const object = (fields: Readonly<Record<string, Field>>): Shape => ({ fields });
const list = (items: Shape): Shape => ({ items });
const map = (values: Shape): Shape => ({ values });
const since = (version: string, shape: Shape): Field => ({ shape, since: version });

const STRING_MAP = map(S);

const NODE_CLASS_SPEC = object({
  amiFamily: S,
  amiSelectorTerms: list(
    object({
      alias: S,
      id: S,
      name: S,
      owner: S,
      ssmParameter: since('1.4.0', S),
      tags: STRING_MAP,
    })
  ),
  associatePublicIPAddress: S,
  blockDeviceMappings: list(
    object({
      deviceName: S,
      ebs: object({
        deleteOnTermination: S,
        encrypted: S,
        iops: S,
        kmsKeyID: S,
        snapshotID: S,
        throughput: S,
        volumeInitializationRate: since('1.5.0', S),
        volumeSize: S,
        volumeType: S,
      }),
      rootVolume: S,
    })
  ),
  capacityReservationSelectorTerms: since(
    '1.3.0',
    list(
      object({
        id: S,
        instanceMatchCriteria: since('1.8.0', S),
        ownerID: S,
        tags: STRING_MAP,
      })
    )
  ),
  connectionTracking: since(
    '1.13.0',
    object({ tcpEstablishedTimeout: S, udpStreamTimeout: S, udpTimeout: S })
  ),
  context: S,
  cpuOptions: since('1.13.0', object({ nestedVirtualization: S })),
  detailedMonitoring: S,
  instanceProfile: S,
  instanceStorePolicy: S,
  ipPrefixCount: since('1.8.0', S),
  // Not walked here: kubelet-config-valid reports its fields, typed by the CRD of every release up
  // to v1.14.1 and an open map validated by the controller after it.
  kubelet: OPEN,
  metadataOptions: object({
    httpEndpoint: S,
    httpProtocolIPv6: S,
    httpPutResponseHopLimit: S,
    httpTokens: S,
  }),
  networkInterfaces: since(
    '1.11.0',
    list(object({ deviceIndex: S, interfaceType: S, networkCardIndex: S }))
  ),
  placementGroupSelector: since('1.11.0', object({ id: S, name: S })),
  role: S,
  securityGroupSelectorTerms: list(object({ id: S, name: S, tags: STRING_MAP })),
  subnetSelectorTerms: list(object({ id: S, tags: STRING_MAP })),
  tags: STRING_MAP,
  userData: S,
});

const TAINT = object({ effect: S, key: S, timeAdded: S, value: S });

const NODE_POOL_SPEC = object({
  disruption: object({
    budgets: list(object({ duration: S, nodes: S, reasons: list(S), schedule: S })),
    consolidateAfter: S,
    consolidationPolicy: S,
  }),
  limits: STRING_MAP,
  replicas: since('1.8.0', S),
  template: object({
    metadata: object({ annotations: STRING_MAP, labels: STRING_MAP }),
    spec: object({
      expireAfter: S,
      nodeClassRef: object({ group: S, kind: S, name: S }),
      requirements: list(object({ key: S, minValues: S, operator: S, values: list(S) })),
      startupTaints: list(TAINT),
      taints: list(TAINT),
      terminationGracePeriod: S,
    }),
  }),
  weight: S,
});

/** ObjectMeta (meta/v1): what `metadata` may hold on any object. */
const OBJECT_META = object({
  annotations: STRING_MAP,
  creationTimestamp: S,
  deletionGracePeriodSeconds: S,
  deletionTimestamp: S,
  finalizers: list(S),
  generateName: S,
  generation: S,
  labels: STRING_MAP,
  managedFields: list(S),
  name: S,
  namespace: S,
  ownerReferences: list(S),
  resourceVersion: S,
  selfLink: S,
  uid: S,
});

const rootOf = (spec: Shape): Shape =>
  object({ apiVersion: S, kind: S, metadata: OBJECT_META, spec, status: S });

const NODE_CLASS = rootOf(NODE_CLASS_SPEC);
const NODE_POOL = rootOf(NODE_POOL_SPEC);

/** What the walk knows of the object, for remediations (the class a NodePool uses). */
interface WalkContext {
  readonly kind: 'EC2NodeClass' | 'NodePool';
  readonly version: KarpenterVersion | undefined;
  /** Read from a cluster (or a world file), not from a manifest: its CRD already admitted it. */
  readonly stored: boolean;
  readonly nodeClass?: string;
}

/** Options of the walk: the Karpenter release, and where the object was read. */
export interface FieldScanOptions {
  readonly version?: KarpenterVersion | undefined;
  /** True for objects read from a cluster or world file rather than a manifest. */
  readonly stored?: boolean;
  /** NodePools: the class its nodeClassRef names, for the remediation of a v1beta1 kubelet. */
  readonly nodeClass?: string;
}

interface Advice {
  readonly message: string;
  readonly remediation: string;
}

/** Where a field went in v1, for fields of the earlier APIs (karpenter.sh/v1beta1, v1alpha5). */
const MOVED: Readonly<Record<string, (context: WalkContext) => Advice>> = {
  'NodePool spec.template.spec.kubelet': ({ nodeClass }) => ({
    message:
      'a v1beta1 field: kubelet settings moved to the EC2NodeClass in v1 (spec.kubelet of the class the NodePool uses)',
    remediation: `Move these settings to spec.kubelet of the EC2NodeClass ${nodeClass === undefined ? 'this NodePool uses' : `"${nodeClass}"`} and remove spec.template.spec.kubelet; NodePools that need different kubelet settings need their own EC2NodeClass (https://karpenter.sh/docs/upgrading/v1-migration/).`,
  }),
  'NodePool spec.disruption.expireAfter': () => ({
    message: 'a v1beta1 field: expireAfter moved to spec.template.spec.expireAfter in v1',
    remediation: 'Move the value to spec.template.spec.expireAfter.',
  }),
  'NodePool spec.template.spec.nodeClassRef.apiVersion': () => ({
    message: 'a v1beta1 field: v1 names the class by group, kind and name',
    remediation:
      'Replace apiVersion with group: karpenter.k8s.aws (kind: EC2NodeClass and name stay).',
  }),
  'NodePool spec.template.spec.resources': () => ({
    message: 'a v1beta1 field, removed in v1',
    remediation: 'Remove spec.template.spec.resources.',
  }),
  'EC2NodeClass spec.subnetSelector': () => ({
    message: 'an AWSNodeTemplate field: v1 uses spec.subnetSelectorTerms',
    remediation: 'Write the selector as spec.subnetSelectorTerms (a list of terms of tags or id).',
  }),
  'EC2NodeClass spec.securityGroupSelector': () => ({
    message: 'an AWSNodeTemplate field: v1 uses spec.securityGroupSelectorTerms',
    remediation:
      'Write the selector as spec.securityGroupSelectorTerms (a list of terms of tags, id or name).',
  }),
  'EC2NodeClass spec.amiSelector': () => ({
    message: 'an AWSNodeTemplate field: v1 uses spec.amiSelectorTerms',
    remediation:
      'Write the selector as spec.amiSelectorTerms (terms, or one alias such as al2023@latest).',
  }),
  'EC2NodeClass spec.launchTemplate': () => ({
    message:
      'an AWSNodeTemplate field: Karpenter no longer launches from your own launch templates',
    remediation:
      'Set what the launch template held with the EC2NodeClass fields, and remove spec.launchTemplate.',
  }),
};

/** A field the CRD does not declare (for the cluster's Karpenter release, when known). */
export interface UnknownField {
  readonly path: string;
  readonly rule: 'unknown-field';
  /** Why it is unknown and where it belongs, for the message. */
  readonly message: string;
  readonly remediation: string;
  /** Set when the field exists, but only from a later release than the cluster's. */
  readonly since?: string;
}

function shapeOf(field: Field): Shape {
  return typeof field === 'object' && 'shape' in field ? field.shape : field;
}

function sinceOf(field: Field): string | undefined {
  return typeof field === 'object' && 'shape' in field ? field.since : undefined;
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `spec.amiSelectorTerms[3].foo` → `spec.amiSelectorTerms[].foo` (for the MOVED table). */
function genericPath(path: string): string {
  return path.replace(/\[\d+\]/g, '');
}

function walk(
  context: WalkContext,
  value: unknown,
  shape: Shape,
  path: PropertyKey[],
  out: UnknownField[]
): void {
  if (shape === 'scalar' || shape === 'open') return;
  if ('items' in shape) {
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        walk(context, item, shape.items, [...path, index], out);
      });
    }
    return;
  }
  if (!isRecord(value)) return;
  if ('values' in shape) {
    for (const [key, item] of Object.entries(value)) {
      walk(context, item, shape.values, [...path, key], out);
    }
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    const fieldPath = formatPath([...path, key]);
    const field = Object.hasOwn(shape.fields, key) ? shape.fields[key] : undefined;
    if (field === undefined) {
      const moved = MOVED[`${context.kind} ${genericPath(fieldPath)}`]?.(context);
      const near = didYouMean(key, Object.keys(shape.fields));
      out.push({
        path: fieldPath,
        rule: 'unknown-field',
        message: moved?.message ?? `not a field of ${formatPath(path) || 'the object'}${near}`,
        remediation:
          moved?.remediation ??
          `Remove ${fieldPath}${near === '' ? '' : `, or correct its name${near}`}.`,
      });
      continue;
    }
    const added = sinceOf(field);
    const floor = added === undefined ? undefined : parseKarpenterVersion(added);
    const { version } = context;
    if (
      added !== undefined &&
      version !== undefined &&
      floor !== undefined &&
      compareVersions(version, floor) < 0
    ) {
      out.push({
        path: fieldPath,
        rule: 'unknown-field',
        since: added,
        message: context.stored
          ? `added in Karpenter v${added}: the cluster stored it (its CRDs are newer), but the Karpenter ${version.raw} controller does not know the field, so the setting has no effect`
          : `added to the CRD in Karpenter v${added}; the CRD of Karpenter ${version.raw} installed here does not have it`,
        remediation: `Upgrade Karpenter (and its CRDs) to v${added} or later, or remove ${fieldPath}.`,
      });
      continue;
    }
    walk(context, item, shapeOf(field), [...path, key], out);
  }
}

function contextOf(kind: WalkContext['kind'], options: FieldScanOptions): WalkContext {
  return {
    kind,
    version: options.version,
    stored: options.stored ?? false,
    ...(options.nodeClass === undefined ? {} : { nodeClass: options.nodeClass }),
  };
}

/** Fields of an EC2NodeClass object its v1 CRD does not declare (at `version`, when known). */
export function unknownNodeClassFields(
  object: unknown,
  options: FieldScanOptions = {}
): UnknownField[] {
  const out: UnknownField[] = [];
  walk(contextOf('EC2NodeClass', options), object, NODE_CLASS, [], out);
  return out;
}

/** Fields of a NodePool object its karpenter.sh/v1 CRD does not declare. */
export function unknownNodePoolFields(
  object: unknown,
  options: FieldScanOptions = {}
): UnknownField[] {
  const out: UnknownField[] = [];
  walk(contextOf('NodePool', options), object, NODE_POOL, [], out);
  return out;
}

/** What happens to such a field, for messages (the same for every object). */
export const UNKNOWN_FIELD_OUTCOME =
  "kubectl apply and create reject the whole object (their default --validate=true is strict: unknown field); clients that set no field validation get the API server's default, Warn: a warning, and the field is dropped, so it never takes effect.";
