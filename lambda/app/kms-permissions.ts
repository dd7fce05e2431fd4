// The controller role's identity-policy simulations on the customer managed KMS keys a NodeClass's
// EBS volumes use (collect-permissions.ts adds them to each class' plan). Only enabled keys of the
// class' AWS facts are simulated: a key that cannot be used fails on its state alone.
import type { ControllerRoleFound, SimulationRequest } from '../core/facts/permissions.js';
import type { PermissionScope } from '../core/iam/request-context.js';
import type { Inventory } from '../core/inventory.js';
import { ebsKmsKeyRequests } from '../core/kms/launch-access.js';

interface PlanWithInput {
  readonly key: string;
  readonly requests: readonly SimulationRequest[];
  readonly input?: { readonly scope: PermissionScope; readonly controller: ControllerRoleFound };
}

/** Customer managed, enabled keys the class's volumes use, by ARN. */
function customerKeyArns(inventory: Inventory, factsKey: string): string[] {
  const ebsKeys = inventory.awsFacts.get(factsKey)?.ebsKeys;
  const keys = ebsKeys?.status === 'ok' ? ebsKeys.value.keys : [];
  return keys.flatMap(({ lookup }) =>
    lookup.status === 'ok' &&
    lookup.value !== undefined &&
    lookup.value.key.manager === 'CUSTOMER' &&
    lookup.value.key.state === 'Enabled'
      ? [lookup.value.key.arn]
      : []
  );
}

/** Each plan with the simulations of its class's customer keys added. */
export function withEbsKmsKeyRequests<Plan extends PlanWithInput>(
  inventory: Inventory,
  plans: readonly Plan[]
): Plan[] {
  return plans.map((plan) => {
    if (plan.input === undefined) return plan;
    const keyArns = customerKeyArns(inventory, plan.key);
    if (keyArns.length === 0) return plan;
    const requests = ebsKmsKeyRequests(plan.input.scope, plan.input.controller, keyArns);
    return { ...plan, requests: [...plan.requests, ...requests] };
  });
}
