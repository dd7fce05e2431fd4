import { defineCheck, forEachNodeClass } from '../check.js';
import { parsePolicyDocument, trustsService } from '../iam-policy.js';
import { type Partition, partitionDnsSuffix } from '../region.js';
import { awsFactsOf, withSlice } from './support/aws-facts.js';

/** EC2 service principals accepted for a node role in a partition (China also uses `.com.cn`). */
export function ec2ServicePrincipals(partition: Partition): string[] {
  return [...new Set(['ec2.amazonaws.com', `ec2.${partitionDnsSuffix(partition)}`])];
}

/** The node role exists and EC2 may assume it. */
export const nodeRoleValid = defineCheck({
  id: 'node-role-valid',
  title: 'The node role exists and trusts EC2',
  group: 'aws',
  severity: 'critical',
  inputs: ['aws'],
  rationale:
    'Nodes get their AWS credentials by assuming the node role through their instance profile. A role that does not exist cannot be put into a profile, and a role that does not trust ec2.amazonaws.com gives instances no credentials, so they cannot authenticate to the cluster and never become nodes.',
  remediation:
    'Create the node role with a trust policy allowing the EC2 service principal (ec2.amazonaws.com) to call sts:AssumeRole, and reference it by name.',
  references: [
    'https://karpenter.sh/docs/concepts/nodeclasses/#specrole',
    'https://docs.aws.amazon.com/eks/latest/userguide/create-node-role.html',
  ],
  material: ['role', 'cause', 'reason'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, ({ spec }, target) => {
      const { resource, cluster } = target;
      const location = { path: spec.role !== undefined ? 'spec.role' : 'spec.instanceProfile' };
      return withSlice(
        resource,
        'the node role (iam:GetRole)',
        awsFactsOf(target).nodeRole,
        (facts) => {
          if (facts.name === undefined) {
            // instance-profile-exists already fails for this; a second critical finding is noise.
            return [
              {
                status: 'not-applicable',
                resource,
                message:
                  'No node role to check: the instance profile does not exist or holds no role (reported by instance-profile-exists).',
              },
            ];
          }
          if (facts.role === undefined) {
            return [
              {
                status: 'fail',
                resource,
                message: `Node role "${facts.name}" (from ${facts.source}) does not exist.`,
                evidence: { role: facts.name, cause: 'not-found', source: facts.source },
                location,
              },
            ];
          }
          const role = facts.role;
          const parsed =
            role.assumeRolePolicyDocument === undefined
              ? { ok: false as const, error: 'no trust policy returned' }
              : parsePolicyDocument(role.assumeRolePolicyDocument);
          if (!parsed.ok) {
            return [
              {
                status: 'fail',
                resource,
                message: `Node role "${role.name}" has an unreadable trust policy: ${parsed.error}.`,
                evidence: { role: role.arn, cause: 'unreadable-trust-policy' },
              },
            ];
          }
          const principals = ec2ServicePrincipals(cluster.partition);
          const trust = trustsService(parsed.document, principals);
          if (!trust.trusted) {
            return [
              {
                status: 'fail',
                resource,
                message: `Node role "${role.name}" does not trust ${principals.join(' or ')}: instances cannot assume it and never join.`,
                evidence: {
                  role: role.arn,
                  cause: 'ec2-not-trusted',
                  trustPolicy: role.assumeRolePolicyDocument,
                  expectedPrincipals: principals,
                },
              },
            ];
          }
          return [
            {
              status: 'pass',
              resource,
              message: `Node role "${role.name}" exists and trusts EC2${trust.conditional ? ' (under conditions the scanner does not evaluate)' : ''}.`,
              evidence: { role: role.arn, conditional: trust.conditional },
            },
          ];
        }
      );
    }),
});
