import * as z from 'zod';
import { StringMapSchema } from './selectors/tag-map.js';

// Structural schemas for Karpenter's v1 objects. Types only: the CRD's CEL rules are evaluated by
// the `nodeclass-schema-valid` check so that each violation becomes its own finding. Unknown fields
// are kept (newer Karpenter versions add fields).

// Keeps `__proto__`/`constructor` keys as ordinary keys (tags, labels and annotations alike).
const stringMap = StringMapSchema;

/** A copy of `value` without the declared fields set to `null`. */
function withoutNullFields(value: unknown, shape: Readonly<Record<string, unknown>>): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const entries = Object.entries(value);
  if (!entries.some(([key, field]) => field === null && Object.hasOwn(shape, key))) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, field] of entries) {
    if (field === null && Object.hasOwn(shape, key)) continue;
    Object.defineProperty(copy, key, {
      value: field,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

/**
 * An object of a Karpenter CRD: a declared field set to `null` is absent, as the API server decodes
 * it (no field of these CRDs is nullable: nulls are dropped, then defaults and validation apply);
 * Go clients send `null` for nil slices such as capacityReservationSelectorTerms.
 */
function apiObject<Shape extends z.core.$ZodLooseShape>(shape: Shape) {
  return z.preprocess((value) => withoutNullFields(value, shape), z.looseObject(shape));
}

export const SubnetSelectorTermSchema = apiObject({
  id: z.string().optional(),
  tags: stringMap.optional(),
});

export const SecurityGroupSelectorTermSchema = apiObject({
  id: z.string().optional(),
  name: z.string().optional(),
  tags: stringMap.optional(),
});

export const AmiSelectorTermSchema = apiObject({
  alias: z.string().optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  owner: z.string().optional(),
  ssmParameter: z.string().optional(),
  tags: stringMap.optional(),
});

export const CapacityReservationSelectorTermSchema = apiObject({
  id: z.string().optional(),
  ownerID: z.string().optional(),
  instanceMatchCriteria: z.string().optional(),
  tags: stringMap.optional(),
});

const MetadataOptionsSchema = apiObject({
  httpEndpoint: z.string().optional(),
  httpProtocolIPv6: z.string().optional(),
  httpPutResponseHopLimit: z.number().int().optional(),
  httpTokens: z.string().optional(),
});

const BlockDeviceSchema = apiObject({
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

export const BlockDeviceMappingSchema = apiObject({
  deviceName: z.string().optional(),
  ebs: BlockDeviceSchema.optional(),
  rootVolume: z.boolean().optional(),
});

const NetworkInterfaceSchema = apiObject({
  networkCardIndex: z.number().int().optional(),
  deviceIndex: z.number().int().optional(),
  interfaceType: z.string().optional(),
});

export const EC2NodeClassSpecSchema = apiObject({
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

export const ConditionSchema = apiObject({
  type: z.string(),
  status: z.string(),
  reason: z.string().optional(),
  message: z.string().optional(),
  lastTransitionTime: z.string().optional(),
  observedGeneration: z.number().int().optional(),
});

const EC2NodeClassStatusSchema = apiObject({
  subnets: z
    .array(
      apiObject({ id: z.string(), zone: z.string().optional(), zoneID: z.string().optional() })
    )
    .optional(),
  securityGroups: z.array(apiObject({ id: z.string(), name: z.string().optional() })).optional(),
  amis: z
    .array(
      apiObject({
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

// The API server names an object that has only `generateName` itself (the prefix plus random
// characters) before it validates it, so a manifest may leave `name` out (`kubectl create`).
const ObjectMetaSchema = apiObject({
  name: z.string().optional(),
  generateName: z.string().optional(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  generation: z.number().int().optional(),
  labels: stringMap.optional(),
  annotations: stringMap.optional(),
  creationTimestamp: z.string().optional(),
}).superRefine((metadata, context) => {
  if (!metadata.name && !metadata.generateName) {
    context.addIssue({
      code: 'custom',
      path: ['name'],
      message: 'Required value: name or generateName is required',
    });
  }
});

export const EC2NodeClassSchema = apiObject({
  apiVersion: z.literal('karpenter.k8s.aws/v1'),
  kind: z.literal('EC2NodeClass'),
  metadata: ObjectMetaSchema,
  spec: EC2NodeClassSpecSchema,
  status: EC2NodeClassStatusSchema.optional(),
});

// NodePool (karpenter.sh/v1). Structural: types and the fields other checks rely on are required;
// the CRD's patterns, enums and CEL rules are evaluated by `nodepool-schema-valid`, one finding per
// violation. Unknown fields are kept.

export const NodeSelectorRequirementSchema = apiObject({
  key: z.string(),
  operator: z.string(),
  values: z.array(z.string()).optional(),
  minValues: z.number().int().optional(),
});

const TaintSchema = apiObject({
  key: z.string(),
  effect: z.string(),
  value: z.string().optional(),
  timeAdded: z.string().optional(),
});

const NodeClassReferenceSchema = apiObject({
  group: z.string(),
  kind: z.string(),
  name: z.string(),
});

const DisruptionBudgetSchema = apiObject({
  // The CRD types `nodes` as a string; a bare YAML number is reported by the CRD rules.
  nodes: z.union([z.string(), z.number()]).optional(),
  schedule: z.string().optional(),
  duration: z.string().optional(),
  reasons: z.array(z.string()).optional(),
});

const DisruptionSchema = apiObject({
  consolidationPolicy: z.string().optional(),
  consolidateAfter: z.string().optional(),
  budgets: z.array(DisruptionBudgetSchema).optional(),
});

const NodePoolSpecSchema = apiObject({
  template: apiObject({
    metadata: z
      .looseObject({ labels: stringMap.optional(), annotations: stringMap.optional() })
      .optional(),
    spec: apiObject({
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

export const NodePoolSchema = apiObject({
  // Any karpenter.sh version parses; nodepool-schema-valid reports versions v1 does not serve.
  apiVersion: z.string(),
  kind: z.literal('NodePool'),
  metadata: ObjectMetaSchema,
  spec: NodePoolSpecSchema,
  status: apiObject({ conditions: z.array(ConditionSchema).optional() }).optional(),
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
export type NodeSelectorRequirement = z.infer<typeof NodeSelectorRequirementSchema>;

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
