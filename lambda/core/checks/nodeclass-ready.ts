import { defineCheck, forEachNodeClass } from '../check.js';
import type { Condition } from '../schema.js';

/** Dependent conditions that are not True: what the cluster says is wrong. */
function unhealthyDependents(conditions: readonly Condition[]): Condition[] {
  return conditions.filter(
    (condition) => condition.type !== 'Ready' && condition.status !== 'True'
  );
}

function describeCondition(condition: Condition): string {
  const reason = condition.reason ? `/${condition.reason}` : '';
  const message = condition.message ? ` (${condition.message})` : '';
  return `${condition.type}=${condition.status}${reason}${message}`;
}

/**
 * The cluster's own verdict on the NodeClass, surfaced outside the cluster (Ready is False when any
 * dependent condition is).
 */
export const nodeClassReady = defineCheck({
  id: 'nodeclass-ready',
  title: 'Karpenter reports the NodeClass Ready',
  group: 'cluster',
  severity: 'high',
  inputs: ['cluster'],
  rationale:
    'Karpenter launches nodes only from an EC2NodeClass whose Ready condition is True. While it is not, every NodePool that references the class launches nothing and pods waiting for those NodePools stay Pending.',
  remediation:
    'Fix the condition Karpenter names (kubectl describe ec2nodeclass <name>); NodePools that reference a NodeClass that is not Ready launch no nodes.',
  references: [
    'https://karpenter.sh/docs/concepts/nodeclasses/#statusconditions',
    '#8072',
    '#8148',
  ],
  material: ['conditions'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, (nodeClass, { resource }) => {
      const conditions = nodeClass.status?.conditions ?? [];
      const ready = conditions.find((condition) => condition.type === 'Ready');
      const unhealthy = unhealthyDependents(conditions);
      const dependents = unhealthy.map(describeCondition);
      const evidence = {
        ...(ready ? { ready } : {}),
        ...(dependents.length > 0 ? { notTrue: dependents } : {}),
        // Type, status and reason of Ready and every condition that is not True; Karpenter's
        // messages and transition times are left out (they change without the state changing).
        conditions: [...(ready ? [ready] : []), ...unhealthy].map(({ type, status, reason }) => ({
          type,
          status,
          ...(reason ? { reason } : {}),
        })),
      };
      if (!ready) {
        return [
          {
            status: 'fail',
            resource,
            message:
              'The NodeClass has no Ready condition: Karpenter has not reconciled it (is the controller running?).',
            evidence,
          },
        ];
      }
      if (ready.status === 'True') {
        return [{ status: 'pass', resource, message: 'Karpenter reports Ready=True.', evidence }];
      }
      const detail = dependents.length > 0 ? ` Not true: ${dependents.join('; ')}.` : '';
      return [
        {
          status: 'fail',
          resource,
          message: `Karpenter reports ${describeCondition(ready)}: NodePools using this NodeClass launch no nodes.${detail}`,
          evidence,
          location: { path: 'status.conditions' },
        },
      ];
    }),
});
