import { defineCheck, forEachNodeClass } from '../check.js';
import type { AwsNodeClassFacts, Image } from '../facts/aws.js';
import { isIamPathOrArn } from '../iam/arns.js';
import { factsKeyOf } from '../inventory.js';
import type { Condition, EC2NodeClass } from '../schema.js';

/** Karpenter caches ValidationSucceeded for up to 30 minutes (v1.7.0+, karpenter-provider-aws#8439). */
const VALIDATION_UNKNOWN_LIMIT_MS = 30 * 60 * 1000;
const VALIDATION_DEPENDENCIES = [
  'AMIsReady',
  'InstanceProfileReady',
  'SecurityGroupsReady',
  'SubnetsReady',
];

interface Contradiction {
  readonly kind:
    | 'instance-profile'
    | 'node-role'
    | 'validation-unknown'
    | 'observed-generation'
    | 'ami-state';
  /** What the contradiction is about (profile, role, image); absent when the kind says it all. */
  readonly subject?: string | undefined;
  readonly message: string;
  readonly evidence?: Readonly<Record<string, unknown>>;
}

function condition(nodeClass: EC2NodeClass, type: string): Condition | undefined {
  return nodeClass.status?.conditions?.find((c) => c.type === type);
}

function instanceProfileContradictions(
  nodeClass: EC2NodeClass,
  facts: AwsNodeClassFacts | undefined
): Contradiction[] {
  if (condition(nodeClass, 'InstanceProfileReady')?.status !== 'True') return [];
  const profile = nodeClass.spec.instanceProfile;
  if (profile !== undefined) {
    if (isIamPathOrArn(profile)) {
      return [
        {
          kind: 'instance-profile',
          subject: profile,
          message: `InstanceProfileReady=True although spec.instanceProfile "${profile}" is not a name: Karpenter makes no IAM call in instanceProfile mode, and EC2 rejects the value at every launch (#8072).`,
          evidence: { instanceProfile: profile },
        },
      ];
    }
    const looked = facts?.instanceProfile;
    if (looked?.status === 'ok' && !looked.value.profile) {
      return [
        {
          kind: 'instance-profile',
          subject: profile,
          message: `InstanceProfileReady=True but instance profile "${looked.value.name}" does not exist.`,
          evidence: { instanceProfile: profile },
        },
      ];
    }
    if (looked?.status === 'ok' && looked.value.profile?.roleNames.length === 0) {
      return [
        {
          kind: 'instance-profile',
          subject: profile,
          message: `InstanceProfileReady=True but instance profile "${looked.value.name}" holds no role.`,
          evidence: { instanceProfile: profile },
        },
      ];
    }
    return [];
  }
  const role = facts?.nodeRole;
  if (role?.status === 'ok' && role.value.source === 'spec.role' && !role.value.role) {
    return [
      {
        kind: 'node-role',
        subject: role.value.name ?? nodeClass.spec.role,
        message: `InstanceProfileReady=True but node role "${role.value.name ?? nodeClass.spec.role}" does not exist (deleted after Karpenter created the profile).`,
        evidence: { role: nodeClass.spec.role },
      },
    ];
  }
  return [];
}

function validationContradiction(nodeClass: EC2NodeClass, now: Date): Contradiction[] {
  const validation = condition(nodeClass, 'ValidationSucceeded');
  if (validation?.status !== 'Unknown' || !validation.lastTransitionTime) return [];
  const since = Date.parse(validation.lastTransitionTime);
  if (Number.isNaN(since) || now.getTime() - since <= VALIDATION_UNKNOWN_LIMIT_MS) return [];
  // Unknown because a dependency is not ready is honest: nodeclass-ready reports the dependency.
  const waiting = VALIDATION_DEPENDENCIES.filter(
    (type) => condition(nodeClass, type)?.status !== 'True'
  );
  if (validation.reason === 'DependenciesNotReady' && waiting.length > 0) return [];
  const minutes = Math.floor((now.getTime() - since) / 60_000);
  const profile = nodeClass.spec.instanceProfile;
  const cause =
    profile !== undefined && isIamPathOrArn(profile)
      ? ' The instance profile given as an ARN is the likely cause: EC2 rejects it and Karpenter requeues without setting a condition (#8072).'
      : ' Karpenter hides non-authorization dry-run errors this way (InvalidBlockDeviceMapping, VPC mismatch…; #8148): read the controller log for "validating ec2:".';
  return [
    {
      kind: 'validation-unknown',
      message: `ValidationSucceeded=Unknown${validation.reason ? `/${validation.reason}` : ''} for ${minutes} minutes.${cause}`,
      evidence: { validationSucceeded: validation, minutes },
    },
  ];
}

function generationContradiction(nodeClass: EC2NodeClass): Contradiction[] {
  const observed = condition(nodeClass, 'Ready')?.observedGeneration;
  const generation = nodeClass.metadata.generation;
  if (observed === undefined || generation === undefined || observed >= generation) return [];
  return [
    {
      kind: 'observed-generation',
      message: `Ready describes generation ${observed} but the spec is at generation ${generation}: Karpenter has not reconciled the latest spec and refuses launches ("nodeclass status has not been reconciled against the latest spec").`,
      evidence: { observedGeneration: observed, generation },
    },
  ];
}

/** Every image the AMI queries returned, by id (the state-agnostic queries include pending ones). */
function imagesById(facts: AwsNodeClassFacts | undefined): Map<string, Image> {
  const byId = new Map<string, Image>();
  const amis = facts?.amis;
  if (amis?.status !== 'ok') return byId;
  for (const selection of [amis.value.available, amis.value.ignoringState]) {
    if (selection.status !== 'ok') continue;
    for (const query of selection.value.queries) {
      for (const image of query.images) byId.set(image.id, image);
    }
  }
  return byId;
}

function amiContradictions(
  nodeClass: EC2NodeClass,
  facts: AwsNodeClassFacts | undefined
): Contradiction[] {
  const images = imagesById(facts);
  return (nodeClass.status?.amis ?? []).flatMap((ami): Contradiction[] => {
    const image = images.get(ami.id);
    if (!image || image.state === 'available') return [];
    return [
      {
        kind: 'ami-state',
        subject: ami.id,
        message: `status.amis lists ${ami.id}${ami.name ? ` (${ami.name})` : ''}, whose state is "${image.state}": launches with it fail.`,
        evidence: { imageId: ami.id, state: image.state },
      },
    ];
  });
}

/** Karpenter's status conditions agree with what the scanner found (conditions that lie, #8072). */
export const statusAgreesWithScan = defineCheck({
  id: 'status-agrees-with-scan',
  title: "Karpenter's status agrees with the scan",
  group: 'cluster',
  severity: 'high',
  inputs: ['cluster'],
  rationale:
    'Karpenter can report a healthy-looking status for a class that cannot launch: in instanceProfile mode InstanceProfileReady=True without any IAM call, and non-authorization dry-run errors leave ValidationSucceeded=Unknown. Trusting the conditions hides the failure until pods stay Pending.',
  remediation:
    'Trust the scan over the condition: fix the NodeClass as the message says, then force revalidation by adding any annotation to the EC2NodeClass.',
  references: [
    '#8072',
    '#8148',
    '#8312',
    'https://karpenter.sh/docs/concepts/nodeclasses/#statusconditions',
    'https://karpenter.sh/docs/troubleshooting/#force-validation-refresh',
    'https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/controllers/nodeclass/validation.go',
  ],
  material: ['contradictions[].kind', 'contradictions[].subject'],
  evaluate: (inventory, { now }) =>
    forEachNodeClass(inventory, (nodeClass, { resource, entry }) => {
      if (!nodeClass.status) {
        return [
          {
            status: 'not-applicable',
            resource,
            message: 'The NodeClass has no status to compare (see nodeclass-ready).',
          },
        ];
      }
      const facts = inventory.awsFacts.get(factsKeyOf(entry));
      const contradictions = [
        ...instanceProfileContradictions(nodeClass, facts),
        ...validationContradiction(nodeClass, now),
        ...generationContradiction(nodeClass),
        ...amiContradictions(nodeClass, facts),
      ];
      const awsFactsUsed = facts !== undefined;
      if (contradictions.length === 0) {
        return [
          {
            status: 'pass',
            resource,
            message: awsFactsUsed
              ? "Karpenter's status agrees with the scan."
              : "Karpenter's status is consistent (AWS facts not collected: profile, role and AMI states not compared).",
            evidence: { awsFactsUsed },
          },
        ];
      }
      return [
        {
          status: 'fail',
          resource,
          message: contradictions.map((contradiction) => contradiction.message).join(' '),
          evidence: {
            awsFactsUsed,
            // The minutes a condition has been Unknown are evidence, never material: the kind is.
            contradictions: contradictions.map(({ kind, subject, evidence }) => ({
              kind,
              ...(subject === undefined ? {} : { subject }),
              ...evidence,
            })),
          },
          location: { path: 'status.conditions' },
        },
      ];
    }),
});
