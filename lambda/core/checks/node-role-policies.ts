import { defineCheck, forEachNodeClass } from '../check.js';
import type { Severity } from '../model.js';
import { awsFactsOf, withSlice } from './support/aws-facts.js';

interface Requirement {
  readonly names: readonly string[];
  readonly severity: Severity;
  readonly note?: string;
}

/** The node role policies of Karpenter's getting-started template and the EKS node role docs. */
const REQUIRED: readonly Requirement[] = [
  { names: ['AmazonEKSWorkerNodePolicy'], severity: 'high' },
  {
    names: ['AmazonEC2ContainerRegistryPullOnly', 'AmazonEC2ContainerRegistryReadOnly'],
    severity: 'high',
  },
  {
    names: ['AmazonEKS_CNI_Policy'],
    severity: 'high',
    note: 'this may be fine when the VPC CNI (aws-node) has its own role through IRSA or EKS Pod Identity',
  },
  { names: ['AmazonSSMManagedInstanceCore'], severity: 'low' },
];

/** AWS managed policy name of an ARN in any partition (`arn:aws-cn:iam::aws:policy/X` → X). */
export function managedPolicyName(arn: string): string | undefined {
  const match = /^arn:[a-z0-9-]+:iam::aws:policy\/(?:.+\/)?([^/]+)$/.exec(arn);
  return match?.[1];
}

/** The node role has the AWS managed policies nodes need. */
export const nodeRolePolicies = defineCheck({
  id: 'node-role-policies',
  title: 'The node role has the policies EKS nodes need',
  group: 'aws',
  severity: 'high',
  inputs: ['aws'],
  rationale:
    "The node role's policies let nodes look up their instance and cluster while bootstrapping (AmazonEKSWorkerNodePolicy), pull images from ECR, including the pause and VPC CNI images, and, unless the VPC CNI has its own role, assign pod IP addresses. Without them nodes launch but stay NotReady or their pods never start.",
  remediation:
    'Attach AmazonEKSWorkerNodePolicy, AmazonEC2ContainerRegistryPullOnly, AmazonEKS_CNI_Policy (unless the VPC CNI has its own role) and AmazonSSMManagedInstanceCore to the node role.',
  references: ['https://docs.aws.amazon.com/eks/latest/userguide/create-node-role.html', '#7963'],
  material: ['role', 'missing', 'reason'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, (_nodeClass, target) => {
      const { resource } = target;
      return withSlice(
        resource,
        'the node role (iam:GetRole)',
        awsFactsOf(target).nodeRole,
        (facts) => {
          const role = facts.role;
          if (role === undefined) {
            return [
              {
                status: 'not-applicable',
                resource,
                message: 'No node role to inspect (see node-role-valid).',
              },
            ];
          }
          const attached = new Set(
            role.attachedPolicyArns.flatMap((arn) => managedPolicyName(arn) ?? [])
          );
          const missing = REQUIRED.filter(
            (requirement) => !requirement.names.some((name) => attached.has(name))
          );
          if (missing.length === 0) {
            return [
              {
                status: 'pass',
                resource,
                message: `Node role "${role.name}" has the node policies attached.`,
              },
            ];
          }
          const severity = missing.some((requirement) => requirement.severity === 'high')
            ? 'high'
            : 'low';
          const text = missing
            .map(
              (requirement) =>
                `${requirement.names.join(' or ')}${requirement.note ? ` (${requirement.note})` : ''}`
            )
            .join('; ');
          return [
            {
              status: 'fail',
              resource,
              severity,
              message: `Node role "${role.name}" lacks ${text}. Inline policies granting the same are not inspected.`,
              remediation: `Attach to role ${role.name}: ${missing.map((requirement) => requirement.names[0]).join(', ')}.`,
              evidence: {
                role: role.arn,
                missing: missing.map((requirement) => requirement.names[0]),
                attached: role.attachedPolicyArns,
              },
            },
          ];
        }
      );
    }),
});
