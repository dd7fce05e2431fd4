import { z } from 'zod';
import { StringMapSchema } from './selectors/tag-map.js';

// Structural schemas for Karpenter's v1 objects. Types only: the CRD's CEL rules are evaluated by
// the `nodeclass-schema-valid` check so that each violation becomes its own finding. Unknown fields
// are kept (newer Karpenter versions add fields).

// Keeps `__proto__`/`constructor` keys as ordinary keys (tags, labels and annotations alike).
const stringMap = StringMapSchema;

export const SubnetSelectorTermSchema = z.looseObject({
  id: z.string().optional(),
  tags: stringMap.optional(),
});

export const SecurityGroupSelectorTermSchema = z.looseObject({
  id: z.string().optional(),
  name: z.string().optional(),
  tags: stringMap.optional(),
});

export const AmiSelectorTermSchema = z.looseObject({
  alias: z.string().optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  owner: z.string().optional(),
  ssmParameter: z.string().optional(),
  tags: stringMap.optional(),
});

export const CapacityReservationSelectorTermSchema = z.looseObject({
  id: z.string().optional(),
  ownerID: z.string().optional(),
  instanceMatchCriteria: z.string().optional(),
  tags: stringMap.optional(),
});

export const MetadataOptionsSchema = z.looseObject({
  httpEndpoint: z.string().optional(),
  httpProtocolIPv6: z.string().optional(),
  httpPutResponseHopLimit: z.number().int().optional(),
  httpTokens: z.string().optional(),
});

export const BlockDeviceSchema = z.looseObject({
  deleteOnTermination: z.boolean().optional(),
  encrypted: z.boolean().optional(),
  iops: z.number().int().optional(),
  kmsKeyID: z.string().optional(),
  snapshotID: z.string().optional(),
  throughput: z.number().int().optional(),
  volumeInitializationRate: z.number().int().optional(),
  volumeSize: z.union([z.string(), z.number()]).optional(),
  volumeType: z.string().optional(),
});

export const BlockDeviceMappingSchema = z.looseObject({
  deviceName: z.string().optional(),
  ebs: BlockDeviceSchema.optional(),
  rootVolume: z.boolean().optional(),
});

export const NetworkInterfaceSchema = z.looseObject({
  networkCardIndex: z.number().int().optional(),
  deviceIndex: z.number().int().optional(),
  interfaceType: z.string().optional(),
});

export const EC2NodeClassSpecSchema = z.looseObject({
  subnetSelectorTerms: z.array(SubnetSelectorTermSchema),
  securityGroupSelectorTerms: z.array(SecurityGroupSelectorTermSchema),
  amiSelectorTerms: z.array(AmiSelectorTermSchema),
  capacityReservationSelectorTerms: z.array(CapacityReservationSelectorTermSchema).optional(),
  placementGroupSelector: z
    .looseObject({ id: z.string().optional(), name: z.string().optional() })
    .optional(),
  associatePublicIPAddress: z.boolean().optional(),
  ipPrefixCount: z.number().int().optional(),
  amiFamily: z.string().optional(),
  userData: z.string().optional(),
  role: z.string().optional(),
  instanceProfile: z.string().optional(),
  tags: stringMap.optional(),
  kubelet: z.record(z.string(), z.unknown()).optional(),
  blockDeviceMappings: z.array(BlockDeviceMappingSchema).optional(),
  instanceStorePolicy: z.string().optional(),
  networkInterfaces: z.array(NetworkInterfaceSchema).optional(),
  detailedMonitoring: z.boolean().optional(),
  metadataOptions: MetadataOptionsSchema.optional(),
  connectionTracking: z.record(z.string(), z.unknown()).optional(),
  context: z.string().optional(),
  cpuOptions: z.record(z.string(), z.unknown()).optional(),
});

export const ConditionSchema = z.looseObject({
  type: z.string(),
  status: z.string(),
  reason: z.string().optional(),
  message: z.string().optional(),
  lastTransitionTime: z.string().optional(),
  observedGeneration: z.number().int().optional(),
});

export const EC2NodeClassStatusSchema = z.looseObject({
  subnets: z
    .array(
      z.looseObject({ id: z.string(), zone: z.string().optional(), zoneID: z.string().optional() })
    )
    .optional(),
  securityGroups: z
    .array(z.looseObject({ id: z.string(), name: z.string().optional() }))
    .optional(),
  amis: z
    .array(
      z.looseObject({
        id: z.string(),
        name: z.string().optional(),
        deprecated: z.boolean().optional(),
        requirements: z.array(z.unknown()).optional(),
      })
    )
    .optional(),
  capacityReservations: z.array(z.record(z.string(), z.unknown())).optional(),
  instanceProfile: z.string().optional(),
  conditions: z.array(ConditionSchema).optional(),
});

export const ObjectMetaSchema = z.looseObject({
  name: z.string().min(1),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  generation: z.number().int().optional(),
  labels: stringMap.optional(),
  annotations: stringMap.optional(),
  creationTimestamp: z.string().optional(),
});

export const EC2NodeClassSchema = z.looseObject({
  apiVersion: z.literal('karpenter.k8s.aws/v1'),
  kind: z.literal('EC2NodeClass'),
  metadata: ObjectMetaSchema,
  spec: EC2NodeClassSpecSchema,
  status: EC2NodeClassStatusSchema.optional(),
});

// NodePool (karpenter.sh/v1). Structural: types and the fields other checks rely on are required;
// the CRD's patterns, enums and CEL rules are evaluated by `nodepool-schema-valid`, one finding per
// violation. Unknown fields are kept.

export const NodeSelectorRequirementSchema = z.looseObject({
  key: z.string(),
  operator: z.string(),
  values: z.array(z.string()).optional(),
  minValues: z.number().int().optional(),
});

export const TaintSchema = z.looseObject({
  key: z.string(),
  effect: z.string(),
  value: z.string().optional(),
  timeAdded: z.string().optional(),
});

export const NodeClassReferenceSchema = z.looseObject({
  group: z.string(),
  kind: z.string(),
  name: z.string(),
});

export const DisruptionBudgetSchema = z.looseObject({
  // The CRD types `nodes` as a string; a bare YAML number is reported by the CRD rules.
  nodes: z.union([z.string(), z.number()]).optional(),
  schedule: z.string().optional(),
  duration: z.string().optional(),
  reasons: z.array(z.string()).optional(),
});

export const DisruptionSchema = z.looseObject({
  consolidationPolicy: z.string().optional(),
  consolidateAfter: z.string().optional(),
  budgets: z.array(DisruptionBudgetSchema).optional(),
});

export const NodePoolSpecSchema = z.looseObject({
  template: z.looseObject({
    metadata: z
      .looseObject({ labels: stringMap.optional(), annotations: stringMap.optional() })
      .optional(),
    spec: z.looseObject({
      nodeClassRef: NodeClassReferenceSchema,
      requirements: z.array(NodeSelectorRequirementSchema),
      taints: z.array(TaintSchema).optional(),
      startupTaints: z.array(TaintSchema).optional(),
      expireAfter: z.string().optional(),
      terminationGracePeriod: z.string().optional(),
    }),
  }),
  disruption: DisruptionSchema.optional(),
  // int-or-string quantities (`cpu: 1000`, `memory: 1000Gi`).
  limits: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  weight: z.number().int().optional(),
  replicas: z.number().int().optional(),
});

export const NodePoolSchema = z.looseObject({
  // Any karpenter.sh version parses; nodepool-schema-valid reports versions v1 does not serve.
  apiVersion: z.string(),
  kind: z.literal('NodePool'),
  metadata: ObjectMetaSchema,
  spec: NodePoolSpecSchema,
  status: z.looseObject({ conditions: z.array(ConditionSchema).optional() }).optional(),
});

export type SubnetSelectorTerm = z.infer<typeof SubnetSelectorTermSchema>;
export type SecurityGroupSelectorTerm = z.infer<typeof SecurityGroupSelectorTermSchema>;
export type AmiSelectorTerm = z.infer<typeof AmiSelectorTermSchema>;
export type CapacityReservationSelectorTerm = z.infer<typeof CapacityReservationSelectorTermSchema>;
export type BlockDeviceMapping = z.infer<typeof BlockDeviceMappingSchema>;
export type Condition = z.infer<typeof ConditionSchema>;
export type EC2NodeClassSpec = z.infer<typeof EC2NodeClassSpecSchema>;
export type EC2NodeClass = z.infer<typeof EC2NodeClassSchema>;
export type NodePool = z.infer<typeof NodePoolSchema>;
export type NodePoolSpec = z.infer<typeof NodePoolSpecSchema>;
export type NodeSelectorRequirement = z.infer<typeof NodeSelectorRequirementSchema>;
export type Taint = z.infer<typeof TaintSchema>;
export type NodeClassReference = z.infer<typeof NodeClassReferenceSchema>;

/** One structural problem, with the dotted JSON path of the offending field. */
export interface SchemaIssue {
  readonly path: string;
  readonly message: string;
}

export type ParseResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly issues: readonly SchemaIssue[] };

/** `spec.amiSelectorTerms[0].alias` style paths, used in findings and mapped to lines for SARIF. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out;
}

function parseWith<T>(schema: z.ZodType<T>, raw: unknown): ParseResult<T> {
  const result = schema.safeParse(raw);
  if (result.success) return { ok: true, value: result.data };
  return {
    ok: false,
    issues: result.error.issues.map((issue) => ({
      path: formatPath(issue.path),
      message: issue.message,
    })),
  };
}

export function parseEC2NodeClass(raw: unknown): ParseResult<EC2NodeClass> {
  return parseWith(EC2NodeClassSchema, raw);
}

export function parseNodePool(raw: unknown): ParseResult<NodePool> {
  return parseWith(NodePoolSchema, raw);
}

/** The only NodePool API version Karpenter v1 serves. */
export const NODEPOOL_API_VERSION = 'karpenter.sh/v1';

/** A NodePool's `spec.template.spec.requirements`, in order. */
export function nodePoolRequirements(pool: NodePool): readonly NodeSelectorRequirement[] {
  return pool.spec.template.spec.requirements;
}

/** A requirement value as the integer Gt/Lt/Gte/Lte compare, or undefined. */
function integerOf(value: string | undefined): number | undefined {
  return value !== undefined && /^-?[0-9]+$/.test(value) ? Number(value) : undefined;
}

/**
 * Whether one requirement admits a label value (`undefined`: the node lacks the label), with
 * Kubernetes node-selector semantics: In/Exists/Gt/Lt/Gte/Lte need the label, NotIn and
 * DoesNotExist admit its absence. An unknown operator restricts nothing (nodepool-schema-valid
 * reports it).
 */
export function requirementAdmits(
  requirement: NodeSelectorRequirement,
  value: string | undefined
): boolean {
  const values = requirement.values ?? [];
  const bound = integerOf(values[0]);
  const number = integerOf(value);
  switch (requirement.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
      return number !== undefined && bound !== undefined && number > bound;
    case 'Gte':
      return number !== undefined && bound !== undefined && number >= bound;
    case 'Lt':
      return number !== undefined && bound !== undefined && number < bound;
    case 'Lte':
      return number !== undefined && bound !== undefined && number <= bound;
    default:
      return true;
  }
}

/** Whether every requirement on `key` admits `value` (`undefined`: the label is absent). */
export function labelAdmits(
  requirements: readonly NodeSelectorRequirement[],
  key: string,
  value: string | undefined
): boolean {
  return requirements.every((r) => r.key !== key || requirementAdmits(r, value));
}

/** The candidates (e.g. `['amd64', 'arm64']`) the requirements on `key` admit, in order. */
export function admittedValues(
  requirements: readonly NodeSelectorRequirement[],
  key: string,
  candidates: readonly string[]
): string[] {
  return candidates.filter((candidate) => labelAdmits(requirements, key, candidate));
}

/** What the requirements on one label key allow, all of them ANDed. */
export interface LabelValueSet {
  readonly key: string;
  /** False when no requirement names the key (then any value, or none, is allowed). */
  readonly constrained: boolean;
  /** The allowed values when an `In` lists them (NotIn and bounds applied); else undefined. */
  readonly values?: ReadonlySet<string>;
  /** Values a NotIn excludes. */
  readonly excluded: ReadonlySet<string>;
  /** Exclusive integer bounds from Gt/Gte/Lt/Lte (Gte n is stored as greaterThan n-1). */
  readonly greaterThan?: number;
  readonly lessThan?: number;
  /** Whether a node lacking the label satisfies the requirements. */
  readonly allowsAbsent: boolean;
  /** Whether some value satisfies them (false: DoesNotExist, or contradictory requirements). */
  readonly allowsSomeValue: boolean;
}

/** The value set the requirements allow for `key`, for In, NotIn, Exists, DoesNotExist, Gt/Lt/Gte/Lte. */
export function labelValueSet(
  requirements: readonly NodeSelectorRequirement[],
  key: string
): LabelValueSet {
  const own = requirements.filter((r) => r.key === key);
  let values: Set<string> | undefined;
  const excluded = new Set<string>();
  let greaterThan: number | undefined;
  let lessThan: number | undefined;
  let forbidden = false;
  for (const requirement of own) {
    const listed = requirement.values ?? [];
    const bound = integerOf(listed[0]);
    switch (requirement.operator) {
      case 'In':
        values = new Set(listed.filter((v) => values === undefined || values.has(v)));
        break;
      case 'NotIn':
        for (const v of listed) excluded.add(v);
        break;
      case 'DoesNotExist':
        forbidden = true;
        break;
      case 'Gt':
      case 'Gte':
        if (bound !== undefined) {
          const exclusive = requirement.operator === 'Gte' ? bound - 1 : bound;
          greaterThan = Math.max(greaterThan ?? exclusive, exclusive);
        }
        break;
      case 'Lt':
      case 'Lte':
        if (bound !== undefined) {
          const exclusive = requirement.operator === 'Lte' ? bound + 1 : bound;
          lessThan = Math.min(lessThan ?? exclusive, exclusive);
        }
        break;
      default:
        break;
    }
  }
  const finite =
    values === undefined ? undefined : new Set([...values].filter((v) => labelAdmits(own, key, v)));
  const boundsMeet =
    greaterThan === undefined || lessThan === undefined || greaterThan + 1 < lessThan;
  return {
    key,
    constrained: own.length > 0,
    ...(finite ? { values: finite } : {}),
    excluded,
    ...(greaterThan === undefined ? {} : { greaterThan }),
    ...(lessThan === undefined ? {} : { lessThan }),
    allowsAbsent: labelAdmits(own, key, undefined),
    allowsSomeValue: !forbidden && boundsMeet && (finite === undefined || finite.size > 0),
  };
}
