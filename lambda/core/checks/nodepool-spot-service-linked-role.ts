import { defineCheck, readFaultOf } from '../check.js';
import {
  describeDenial,
  describeInconclusive,
  interpretGroup,
  verdictReadFault,
} from '../iam/interpret.js';
import { SPOT_SERVICE_LINKED_ROLE } from '../iam/request-context.js';
import { factsKeyOf } from '../inventory.js';
import { allowsSpot } from '../nodepool-requirements.js';
import { forEachNodePool, requirementPath, withNodeClass } from './support/nodepools.js';

const CREATE_COMMAND = 'aws iam create-service-linked-role --aws-service-name spot.amazonaws.com';
const GROUP = 'spot-service-linked-role';

/** A NodePool that allows Spot can launch it: the account has EC2 Spot's service-linked role, or the controller may create it. */
export const nodePoolSpotServiceLinkedRole = defineCheck({
  id: 'nodepool-spot-service-linked-role',
  title: "Spot NodePool's account has the Spot service-linked role",
  group: 'aws',
  severity: 'critical',
  inputs: ['aws', 'permissions'],
  scope: ['NodePool'],
  rationale: `Every Spot launch needs EC2 Spot's service-linked role ${SPOT_SERVICE_LINKED_ROLE} in the account. When it is absent, EC2 creates it on the first Spot request with the caller's iam:CreateServiceLinkedRole; Karpenter's reference controller policy does not grant that, so every Spot launch of a new account fails with AuthFailure.ServiceLinkedRoleCreationNotPermitted.`,
  remediation: `Create the role once in the account (${CREATE_COMMAND}), as Karpenter's getting-started guide does, or allow the controller role iam:CreateServiceLinkedRole on the role with the condition iam:AWSServiceName=spot.amazonaws.com.`,
  references: [
    'https://github.com/aws/karpenter-provider-aws/issues/5436',
    'https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/service-linked-roles-spot-instance-requests.html',
    'https://karpenter.sh/docs/getting-started/getting-started-with-karpenter/',
  ],
  material: ['reason'],
  evaluate: (inventory) =>
    forEachNodePool(inventory, (nodePool, target) => {
      const { resource } = target;
      if (!allowsSpot(nodePool)) {
        return [
          {
            status: 'not-applicable',
            resource,
            message:
              'The NodePool does not allow Spot (karpenter.sh/capacity-type admits no spot; without that requirement Karpenter launches on-demand).',
          },
        ];
      }
      const path = requirementPath(nodePool, 'karpenter.sh/capacity-type');
      const location = path ? { location: { path } } : {};
      return withNodeClass(nodePool, target, ({ entry }) => {
        const facts = inventory.permissions.get(factsKeyOf(entry));
        const known = facts?.spotServiceLinkedRole;
        if (facts === undefined || known === undefined) {
          return [
            {
              status: 'error',
              resource,
              message: `Not evaluated: whether the account has ${SPOT_SERVICE_LINKED_ROLE} was not read.`,
              readFault: readFaultOf(SPOT_SERVICE_LINKED_ROLE, undefined),
            },
          ];
        }
        if (known.status === 'unavailable') {
          return [
            {
              status: 'error',
              resource,
              message: `Whether the account has ${SPOT_SERVICE_LINKED_ROLE} is unknown: ${known.message}`,
              evidence: { reason: known.reason },
              readFault: readFaultOf(SPOT_SERVICE_LINKED_ROLE, known),
            },
          ];
        }
        if (known.value) {
          return [
            {
              status: 'pass',
              resource,
              message: `The account has EC2 Spot's service-linked role ${SPOT_SERVICE_LINKED_ROLE}.`,
              evidence: { reason: 'role-exists' },
            },
          ];
        }
        const role = facts.controllerRole;
        if (role.status !== 'found') {
          return [
            {
              status: 'error',
              resource,
              message: `The account has no ${SPOT_SERVICE_LINKED_ROLE}, and whether Karpenter's controller may create it is unknown: its role is unknown (see controller-role-found).`,
              evidence: { reason: 'role-absent' },
              ...(role.status === 'unavailable'
                ? { readFault: readFaultOf("Karpenter's controller role", role) }
                : {}),
              causedBy: {
                checkId: 'controller-role-found',
                resource: { cluster: entry.cluster, kind: 'Cluster', name: entry.cluster },
              },
            },
          ];
        }
        const verdict = interpretGroup(facts, GROUP);
        if (verdict.status === 'pass') {
          return [
            {
              status: 'pass',
              resource,
              message: `The account has no ${SPOT_SERVICE_LINKED_ROLE}; controller role ${role.roleArn} may create it (iam:CreateServiceLinkedRole), so the first Spot launch creates it.`,
              evidence: { reason: 'creatable', controllerRole: role.roleArn },
            },
          ];
        }
        if (verdict.status === 'fail') {
          const first = verdict.denials[0];
          return [
            {
              status: 'fail',
              resource,
              message: `The account has no ${SPOT_SERVICE_LINKED_ROLE}, and controller role ${role.roleArn} may not create it (${first === undefined ? 'denied' : describeDenial(first)}): every Spot launch fails with AuthFailure.ServiceLinkedRoleCreationNotPermitted.`,
              remediation: `Create the role once in the account: ${CREATE_COMMAND}. Or allow the controller role iam:CreateServiceLinkedRole on ${first?.resource ?? SPOT_SERVICE_LINKED_ROLE} with the condition StringEquals iam:AWSServiceName = spot.amazonaws.com${verdict.denials.some((denial) => denial.deniedBy === 'scp') ? ' (a service control policy denies it too: creating the role is then the way)' : ''}.`,
              evidence: {
                reason: 'not-creatable',
                controllerRole: role.roleArn,
                denials: verdict.denials.map((denial) => ({
                  action: denial.action,
                  resource: denial.resource,
                  deniedBy: denial.deniedBy,
                })),
              },
              ...location,
            },
          ];
        }
        const problems = [
          ...verdict.unsimulated.map((item) => item.message.replace(/\.$/, '')),
          ...verdict.inconclusive.map(describeInconclusive),
        ];
        return [
          {
            status: 'error',
            resource,
            message: `The account has no ${SPOT_SERVICE_LINKED_ROLE}, and whether controller role ${role.roleArn} may create it could not be verified: ${problems[0] ?? 'nothing was simulated'}.`,
            evidence: {
              reason: 'role-absent',
              unsimulated: verdict.unsimulated,
              inconclusive: verdict.inconclusive,
            },
            readFault: verdictReadFault(verdict),
          },
        ];
      });
    }),
});
