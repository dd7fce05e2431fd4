// Shared evaluation of the controller-* permission checks: one finding per NodeClass and group.
import { type FindingDraft, forEachNodeClass } from '../check.js';
import type { PermissionFacts, PermissionGroup } from '../facts/permissions.js';
import type { Inventory } from '../inventory.js';
import { nodeClassKey } from '../inventory.js';
import type { EC2NodeClass } from '../schema.js';
import { type Denial, describeDenial, interpretGroup } from './interpret.js';
import { permissionScopeOf } from './nodeclass-inputs.js';
import { remediationPolicy } from './remediation.js';

/** Stated in every permission finding: what the simulator cannot see. */
export const SIMULATOR_LIMITS =
  "IAM's policy simulator evaluates the role's identity policies, its permissions boundary and SCPs. It does not evaluate session policies (Pod Identity association inline policies) or resource policies, so an allowed result can still be denied by them.";

export interface PermissionCheckOptions {
  readonly group: PermissionGroup;
  /** What is being verified, e.g. "Launching nodes (RunInstances, CreateFleet…)". */
  readonly subject: string;
  /** A reason when the group does not apply to this NodeClass. */
  readonly notApplicable?: (nodeClass: EC2NodeClass) => string | undefined;
  /** Extra findings (e.g. DryRun results), given the NodeClass' facts. */
  readonly extra?: (facts: PermissionFacts) => readonly Omit<FindingDraft, 'resource'>[];
}

function denialEvidence(denial: Denial): Record<string, unknown> {
  return {
    action: denial.action,
    resource: denial.resource,
    decision: denial.decision,
    deniedBy: denial.deniedBy,
    ...(denial.matchedStatements.length > 0 ? { matchedStatements: denial.matchedStatements } : {}),
    ...(denial.missingContextValues.length > 0
      ? { missingContextValues: denial.missingContextValues }
      : {}),
  };
}

function remediationText(denials: readonly Denial[], policyJson: string | undefined): string {
  const parts: string[] = [];
  if (policyJson !== undefined) {
    parts.push(
      `Add to the Karpenter controller role's policy (and to its permissions boundary, if it has one): ${policyJson}`
    );
  }
  if (denials.some((denial) => denial.deniedBy === 'scp')) {
    parts.push(
      'A service control policy denies it: ask the organization administrators to exempt the Karpenter controller role, or change the request (e.g. tags, encryption) to satisfy the SCP.'
    );
  }
  const denyStatements = denials
    .filter((denial) => denial.deniedBy === 'identity-policy')
    .flatMap((denial) =>
      denial.matchedStatements.map((statement) => statement.sourcePolicyId ?? 'unnamed policy')
    );
  if (denyStatements.length > 0) {
    parts.push(
      `Remove or narrow the Deny statement in ${[...new Set(denyStatements)].join(', ')}.`
    );
  }
  return parts.join(' ');
}

/** One finding per NodeClass for a controller-* group. */
export function permissionCheckDrafts(
  inventory: Inventory,
  options: PermissionCheckOptions
): FindingDraft[] {
  return forEachNodeClass(inventory, (nodeClass, { entry, resource, cluster }) => {
    // Decided by the spec alone, so it holds even when nothing was simulated.
    const reason = options.notApplicable?.(nodeClass);
    if (reason !== undefined) return [{ status: 'not-applicable', resource, message: reason }];
    const facts = inventory.permissions.get(nodeClassKey(entry.cluster, entry.name));
    if (facts === undefined) {
      return [
        {
          status: 'error',
          resource,
          message:
            'Not evaluated: the controller permissions were not simulated for this NodeClass.',
        },
      ];
    }
    const role = facts.controllerRole;
    if (role.status !== 'found') {
      return [
        {
          status: 'error',
          resource,
          message:
            "Not evaluated: Karpenter's controller role is unknown (see controller-role-found).",
          evidence: { lookedAt: role.lookedAt },
        },
      ];
    }
    const verdict = interpretGroup(facts, options.group);
    const baseEvidence = {
      controllerRole: role.roleArn,
      controllerRoleSource: role.source,
      simulations: facts.simulations.filter((outcome) => outcome.request.group === options.group)
        .length,
      evaluated: verdict.evaluated,
      limits: SIMULATOR_LIMITS,
    };
    const extra = (options.extra?.(facts) ?? []).map((draft) => ({ ...draft, resource }));
    if (verdict.status === 'fail') {
      const scope = permissionScopeOf(cluster, role);
      const policy =
        scope.status === 'ok' ? remediationPolicy(scope.value, verdict.denials) : undefined;
      const policyJson = policy === undefined ? undefined : JSON.stringify(policy);
      const first = verdict.denials[0];
      const more = verdict.denials.length > 1 ? ` (+${verdict.denials.length - 1} more)` : '';
      return [
        {
          status: 'fail',
          resource,
          message: `${options.subject} is denied for controller role ${role.roleArn}: ${first === undefined ? '' : describeDenial(first)}${more}.`,
          remediation: remediationText(verdict.denials, policyJson),
          evidence: {
            ...baseEvidence,
            denials: verdict.denials.map(denialEvidence),
            ...(policy === undefined ? {} : { remediationPolicy: policy }),
          },
        },
        ...extra,
      ];
    }
    if (verdict.status === 'error') {
      const problems = [
        ...verdict.unsimulated.map((item) => `${item.kind}: ${item.message.replace(/\.$/, '')}`),
        ...verdict.inconclusive.map(
          (item) =>
            `${item.action} on ${item.resource} is allowed only because the policies use context keys the scanner cannot supply (${item.missingContextValues.join(', ')})`
        ),
      ];
      return [
        {
          status: 'error',
          resource,
          message: `${options.subject} could not be verified for controller role ${role.roleArn}: ${problems[0] ?? 'nothing was simulated'}${problems.length > 1 ? ` (+${problems.length - 1} more)` : ''}.`,
          evidence: {
            ...baseEvidence,
            unsimulated: verdict.unsimulated,
            inconclusive: verdict.inconclusive,
          },
        },
        ...extra,
      ];
    }
    return [
      {
        status: 'pass',
        resource,
        message: `${options.subject} is allowed for controller role ${role.roleArn} (${verdict.evaluated} action/resource pairs simulated with Karpenter's request context).`,
        evidence: baseEvidence,
      },
      ...extra,
    ];
  });
}
