import * as z from 'zod';
import { KARPENTER_CRD_NAMES } from '../../core/admission/crd-names.js';
import { StringMapSchema } from '../../core/selectors/tag-map.js';
import { EBS_ENCRYPTION_DEFAULTS } from '../aws/ebs-encryption-defaults.js';
import { ec2WorldSection, emptyEc2Section, regionWorldFields } from '../aws/fact-descriptors.js';
import { keyedWorldFields } from '../aws/keyed-fact-descriptors.js';
import { PolicyDocumentSchema } from '../aws/policy-document.js';
import { CustomResourceDefinitionSchema } from '../kube/schemas.js';

// World-state file, version 1: AWS facts in the AWS SDK's own response shapes (PascalCase, as the
// SDK returns them), so a recorded account replays exactly. Only the fields the scanner reads are
// typed; everything else is kept as recorded. Untrusted input: parsed, never assumed. The `ec2`
// lists' and the keyed facts' (`ssm.parameters`, `iam.instanceProfiles`, `iam.roles`) schemas live
// with their facts (aws/fact-descriptors.ts, aws/keyed-fact-descriptors.ts).

export const WorldPermissionSchema = z.looseObject({
  /** Role ARN or name of the principal (the Karpenter controller role). `*` matches any. */
  principal: z.string(),
  /** IAM action (`ec2:RunInstances`); `*` wildcards allowed. */
  action: z.string(),
  /** Resource ARN pattern; `*` wildcards allowed. */
  resource: z.string().default('*'),
  decision: z.enum(['allowed', 'implicitDeny', 'explicitDeny']),
  /**
   * What denied it: `scp`, `permissions-boundary`, `identity-policy`, or free text (reported as the
   * matched policy). Rows are read in order; the first row matching principal, action and resource
   * decides, and `permissionsDefault` answers the rest.
   */
  deniedBy: z.string().optional(),
  /** Condition keys the simulator would report as missing (`MissingContextValues`). */
  missingContextValues: z.array(z.string()).optional(),
});

/** A managed policy's default version (GetPolicy + GetPolicyVersion), attached or a boundary. */
const WorldManagedPolicySchema = z.looseObject({
  Arn: z.string(),
  PolicyName: z.string(),
  DefaultVersionId: z.string().optional(),
  Document: PolicyDocumentSchema,
});

/** A service control policy that applies to the account (all of them evaluated as one level). */
const WorldScpSchema = z.looseObject({
  Id: z.string(),
  Name: z.string().optional(),
  Document: PolicyDocumentSchema,
});

const WorldAccessEntrySchema = z.looseObject({
  principalArn: z.string(),
  type: z.string().optional(),
  kubernetesGroups: z.array(z.string()).optional(),
  username: z.string().optional(),
});

const WorldPodIdentityAssociationSchema = z.looseObject({
  namespace: z.string(),
  serviceAccount: z.string(),
  roleArn: z.string(),
  targetRoleArn: z.string().optional(),
  associationId: z.string().optional(),
  disableSessionTags: z.boolean().optional(),
});

const WorldServiceAccountSchema = z.looseObject({
  namespace: z.string(),
  name: z.string(),
  annotations: StringMapSchema.optional(),
});

/** One of Karpenter's CRDs as the cluster serves it (its schema is kept as recorded). */
const WorldCrdSchema = CustomResourceDefinitionSchema.extend({
  metadata: z.looseObject({ name: z.enum(KARPENTER_CRD_NAMES) }),
});

const WorldKubernetesSchema = z.looseObject({
  /** Raw Kubernetes objects, validated later like any manifest (a bad one is a finding). */
  ec2NodeClasses: z.array(z.unknown()).default([]),
  nodePools: z.array(z.unknown()).default([]),
  karpenterVersion: z.string().optional(),
  karpenterNamespace: z.string().optional(),
  karpenterServiceAccount: z.string().optional(),
  serviceAccounts: z.array(WorldServiceAccountSchema).default([]),
  /** `aws-auth` ConfigMap `mapRoles` entries, for CONFIG_MAP authentication modes. */
  awsAuthMapRoles: z
    .array(z.looseObject({ rolearn: z.string(), groups: z.array(z.string()).optional() }))
    .optional(),
  /** Simulated read failure of the Kubernetes API (`401`, `403`, `404`, `timeout`…) for demos and tests. */
  readError: z.string().optional(),
  /** Karpenter's installed CRDs, as `snapshot` read them: scans of this cluster admit by them. */
  crds: z
    .array(WorldCrdSchema)
    .refine(
      (crds) => new Set(crds.map((crd) => crd.metadata.name)).size === crds.length,
      'holds the same CRD twice'
    )
    .optional(),
  /** Why the CRDs could not be read when recorded (`403`…): the built-in rules decide. */
  crdsUnavailable: z.string().optional(),
  /** The recorded CRD read was forbidden (HTTP 403). */
  crdsDenied: z.boolean().optional(),
});

export const WorldClusterSchema = z.looseObject({
  name: z.string(),
  arn: z.string().optional(),
  version: z.string().optional(),
  endpoint: z.string().optional(),
  status: z.string().optional(),
  resourcesVpcConfig: z
    .looseObject({
      vpcId: z.string().optional(),
      subnetIds: z.array(z.string()).optional(),
      securityGroupIds: z.array(z.string()).optional(),
      clusterSecurityGroupId: z.string().optional(),
      endpointPublicAccess: z.boolean().optional(),
      endpointPrivateAccess: z.boolean().optional(),
    })
    .optional(),
  accessConfig: z.looseObject({ authenticationMode: z.string().optional() }).optional(),
  tags: StringMapSchema.optional(),
  accessEntries: z.array(WorldAccessEntrySchema).default([]),
  podIdentityAssociations: z.array(WorldPodIdentityAssociationSchema).default([]),
  kubernetes: WorldKubernetesSchema.optional(),
});

export const WorldSchema = z.looseObject({
  version: z.literal(1),
  account: z.string().regex(/^\d{12}$/, 'account must be a 12-digit AWS account id'),
  region: z.string(),
  partition: z.string().optional(),
  /** One list per EC2 list fact (images, subnets, …), as its descriptor records it. */
  ec2: ec2WorldSection().default(() => emptyEc2Section()),
  /**
   * The region-wide facts, by region: `instanceTypeOfferings` (`{"us-east-1": [{instanceType,
   * zone}]}`) and `instanceTypes` (`{"us-east-1": [InstanceTypeInfo…]}`, as DescribeInstanceTypes
   * returns them). Absent, or no entry for the world's region: not recorded, and the checks that
   * need them fall back to what they can tell without.
   */
  ...regionWorldFields(),
  // Absent sections parse as empty ones (`prefault`: each field's own default applies).
  ssm: z.looseObject(keyedWorldFields('ssm')).prefault({}),
  /**
   * KMS keys (`keys`: DescribeKey's `KeyMetadata`, `Aliases`, `Policy`, `Grants`; an absent policy
   * or grant list is one the scanner may not read) and the account's EBS encryption settings by
   * region (`ebsEncryptionDefaults`; absent for a region: AWS's defaults, no encryption by default
   * and the AWS managed key alias/aws/ebs).
   */
  kms: z
    .looseObject({
      ...keyedWorldFields('kms'),
      ebsEncryptionDefaults: EBS_ENCRYPTION_DEFAULTS.worldField,
    })
    .prefault({}),
  iam: z
    .looseObject({
      ...keyedWorldFields('iam'),
      /** Managed policy documents, for roles whose simulations evaluate their documents. */
      policies: z.array(WorldManagedPolicySchema).optional(),
      permissions: z.array(WorldPermissionSchema).default([]),
      permissionsDefault: z.enum(['allowed', 'implicitDeny']).default('allowed'),
    })
    .prefault({}),
  organizations: z.looseObject({ scps: z.array(WorldScpSchema).default([]) }).optional(),
  eks: z
    .looseObject({ clusters: z.array(WorldClusterSchema).default([]) })
    .default({ clusters: [] }),
});

export type World = z.infer<typeof WorldSchema>;
export type WorldCluster = z.infer<typeof WorldClusterSchema>;
export type WorldPermission = z.infer<typeof WorldPermissionSchema>;
