import { aliasAmiFamily } from '../ami-family.js';
import { defineCheck, forEachNodeClass } from '../check.js';
import type { AccessEntry, AwsAuthRoleMapping, Role } from '../facts/aws.js';
import type { ReadFault } from '../model.js';
import type { EC2NodeClassSpec } from '../schema.js';
import { awsFactsOf, unreadable, withSlice } from './support/aws-facts.js';

interface RoleIdentity {
  readonly account: string;
  readonly name: string;
}

/** Account and bare name of a role ARN, path ignored (aws-auth wants ARNs without path). */
export function roleIdentity(arn: string): RoleIdentity | undefined {
  const match = /^arn:[a-z0-9-]+:iam::(\d{12}):role\/(?:.*\/)?([^/]+)$/.exec(arn);
  return match ? { account: match[1] as string, name: match[2] as string } : undefined;
}

function sameRole(arn: string, role: RoleIdentity): boolean {
  const other = roleIdentity(arn);
  return other !== undefined && other.account === role.account && other.name === role.name;
}

/** The access entry command; an entry's type cannot be changed, so a wrong one is replaced. */
function joinRemediation(
  cluster: string,
  roleArn: string,
  expectedType: string,
  wrongType: AccessEntry | undefined
): string {
  const create = `aws eks create-access-entry --cluster-name ${cluster} --principal-arn ${roleArn} --type ${expectedType}`;
  if (wrongType === undefined) return create;
  return `The type of an access entry cannot be changed: replace the ${wrongType.type ?? 'existing'} entry. aws eks delete-access-entry --cluster-name ${cluster} --principal-arn ${wrongType.principalArn} && ${create}`;
}

/** The nodes run Windows: the image an alias names decides, even under amiFamily: Custom. */
function isWindows(spec: EC2NodeClassSpec): boolean {
  const alias = spec.amiSelectorTerms.find((term) => term.alias)?.alias;
  const family = (alias === undefined ? undefined : aliasAmiFamily(alias)) ?? spec.amiFamily;
  return family?.startsWith('Windows') ?? false;
}

/** The node role is mapped into the cluster: access entry (API modes) or aws-auth (CONFIG_MAP modes). */
export const nodeRoleCanJoin = defineCheck({
  id: 'node-role-can-join',
  title: 'The node role can join the cluster',
  group: 'aws',
  severity: 'critical',
  inputs: ['aws'],
  rationale:
    'EKS lets an instance register as a node only when its role is mapped into the cluster: an access entry of type EC2_LINUX or EC2_WINDOWS, or an aws-auth entry with system:nodes. Otherwise instances launch and are billed but never register, and Karpenter deletes them after its registration timeout and tries again.',
  remediation:
    'Create an EKS access entry of type EC2_LINUX (EC2_WINDOWS for Windows nodes) for the node role, or map it in aws-auth with groups system:bootstrappers and system:nodes.',
  references: [
    '#7558',
    '#5369',
    'https://docs.aws.amazon.com/eks/latest/userguide/creating-access-entries.html',
  ],
  material: ['role', 'authenticationMode', 'causes', 'reason'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, ({ spec }, target) => {
      const { resource, cluster } = target;
      return withSlice(
        resource,
        'the node role (iam:GetRole)',
        awsFactsOf(target).nodeRole,
        (facts) => {
          const role: Role | undefined = facts.role;
          const identity = role ? roleIdentity(role.arn) : undefined;
          if (role === undefined || identity === undefined) {
            return [
              {
                status: 'not-applicable',
                resource,
                message: 'No node role to map (see node-role-valid).',
              },
            ];
          }
          if (cluster.aws?.status !== 'ok') {
            return [
              unreadable(
                resource,
                "the cluster's access configuration (eks:DescribeCluster)",
                cluster.aws
              ),
            ];
          }
          const clusterFacts = cluster.aws.value;
          const mode = clusterFacts.authenticationMode ?? 'API_AND_CONFIG_MAP';
          const useEntries = mode !== 'CONFIG_MAP';
          const useConfigMap = mode !== 'API';
          const expectedType = isWindows(spec) ? 'EC2_WINDOWS' : 'EC2_LINUX';
          const problems: string[] = [];
          // Which mapping is missing or wrong, as codes: the material part of `problems`.
          const causes: string[] = [];
          const unread: string[] = [];
          let unreadReason: ReadFault['reason'] | undefined;
          let wrongType: AccessEntry | undefined;

          if (useEntries) {
            const entries = clusterFacts.accessEntries;
            if (entries?.status === 'ok') {
              const forRole = entries.value.filter((entry) =>
                sameRole(entry.principalArn, identity)
              );
              if (forRole.some((entry) => entry.type === expectedType)) {
                return [
                  {
                    status: 'pass',
                    resource,
                    message: `Access entry of type ${expectedType} exists for node role ${role.name}.`,
                    evidence: { role: role.arn, authenticationMode: mode },
                  },
                ];
              }
              wrongType = forRole[0];
              causes.push(wrongType ? 'access-entry-type' : 'no-access-entry');
              problems.push(
                wrongType
                  ? `the access entry for ${role.name} has type ${wrongType.type ?? 'unknown'}, not ${expectedType}`
                  : `no access entry exists for ${role.name}`
              );
            } else {
              unreadReason ??= entries?.reason ?? 'not-collected';
              unread.push(
                entries
                  ? `access entries (${entries.reason}: ${entries.message})`
                  : 'access entries (not collected)'
              );
            }
          }
          if (useConfigMap) {
            const mappings = clusterFacts.awsAuthRoleMappings;
            if (mappings?.status === 'ok') {
              const mapping: AwsAuthRoleMapping | undefined = mappings.value.find((item) =>
                sameRole(item.roleArn, identity)
              );
              if (mapping?.groups.includes('system:nodes')) {
                return [
                  {
                    status: 'pass',
                    resource,
                    message: `aws-auth maps node role ${role.name} to system:nodes.`,
                    evidence: { role: role.arn, authenticationMode: mode },
                  },
                ];
              }
              causes.push(mapping ? 'aws-auth-without-system-nodes' : 'not-in-aws-auth');
              problems.push(
                mapping
                  ? `aws-auth maps ${role.name} without group system:nodes`
                  : `aws-auth does not map ${role.name}`
              );
            } else {
              unreadReason ??= mappings?.reason ?? 'not-collected';
              unread.push(
                mappings
                  ? `aws-auth (${mappings.reason}: ${mappings.message})`
                  : 'aws-auth (not collected)'
              );
            }
          }
          if (unread.length > 0) {
            return [
              {
                status: 'error',
                resource,
                message: `Not evaluated: could not read ${unread.join(' and ')}${problems.length > 0 ? `; ${problems.join('; ')}` : ''}.`,
                evidence: { role: role.arn, authenticationMode: mode },
                readFault: { reason: unreadReason ?? 'not-collected', input: unread.join(' and ') },
              },
            ];
          }
          return [
            {
              status: 'fail',
              resource,
              message: `Node role ${role.name} cannot join cluster ${cluster.name} (authentication mode ${mode}): ${problems.join('; ')}. Nodes launch but never register.`,
              ...(useEntries
                ? { remediation: joinRemediation(cluster.name, role.arn, expectedType, wrongType) }
                : {}),
              evidence: {
                role: role.arn,
                authenticationMode: mode,
                causes,
                expectedType,
                ...(wrongType ? { entryType: wrongType.type } : {}),
              },
            },
          ];
        }
      );
    }),
});
