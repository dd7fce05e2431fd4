// Shared evaluation of the controller-* permission checks: one finding per NodeClass and group.
import {
  controllerReadFault,
  type FindingDraft,
  forEachNodeClass,
  type RootCause,
  readFaultOf,
  versionReadFault,
  versionUnreadDraft,
} from '../check.js';
import type {
  ControllerRoleFound,
  PermissionFacts,
  PermissionGroup,
  SimulationGap,
} from '../facts/permissions.js';
import type { Inventory, NodeClassEntry } from '../inventory.js';
import { clusterOf, factsKeyOf } from '../inventory.js';
import type { MaterialPath } from '../material.js';
import type { ResourceRef } from '../model.js';
import type { EC2NodeClass } from '../schema.js';
import { clusterNameMayMatter } from './cluster-name.js';
import {
  type Denial,
  describeDenial,
  describeInconclusive,
  type GroupVerdict,
  interpretGroup,
  verdictReadFault,
} from './interpret.js';
import {
  launchRootCheck,
  nodeRoleRootCheck,
  permissionScopeOf,
  simulationInputOf,
} from './nodeclass-inputs.js';
import { remediationPolicy } from './remediation.js';
import { buildSimulations } from './request-context.js';

/**
 * What makes a controller-* finding different: which of Karpenter's requests (kind) are denied for
 * which actions and by whom, and what could not be simulated or concluded. Resource ARNs are left
 * out: a new image under an `@latest` alias is the same denial. Counts and wording are too.
 */
export const PERMISSION_MATERIAL: readonly MaterialPath[] = [
  'denials[].kind',
  'denials[].action',
  'denials[].deniedBy',
  'unsimulated[].kind',
  'unsimulated[].reason',
  'inconclusive[].kind',
  'inconclusive[].action',
  'inconclusive[].openKeys',
];

// Check ids by name: the checks import this module, so it cannot import them.
const CONTROLLER_ROLE_FOUND = 'controller-role-found';
const SCANNER_CAN_READ_CLUSTER = 'scanner-can-read-cluster';

function clusterResource(cluster: string): ResourceRef {
  return { cluster, kind: 'Cluster', name: cluster };
}

const sameGaps = (a: readonly SimulationGap[], b: readonly SimulationGap[]): boolean =>
  a.length === b.length &&
  a.every(
    (gap, index) =>
      gap.group === b[index]?.group &&
      gap.reason === b[index]?.reason &&
      gap.message === b[index]?.message
  );

/**
 * The root finding an `error` verdict follows from, when every reason it could not be verified is a
 * simulation gap another check reports: NodePools unreadable, the image, subnets or security groups
 * unresolved, the node role unknown. Undefined when a simulation call itself failed, a result was
 * inconclusive, or a gap has no such check (unknown region or account, nothing collected).
 */
function gapRootCause(
  inventory: Inventory,
  entry: NodeClassEntry,
  nodeClass: EC2NodeClass,
  role: ControllerRoleFound,
  facts: PermissionFacts,
  group: PermissionGroup,
  verdict: GroupVerdict
): RootCause | undefined {
  const recorded = facts.gaps.filter((gap) => gap.group === group);
  if (recorded.length === 0 || verdict.inconclusive.length > 0) return undefined;
  if (verdict.unsimulated.length !== recorded.length) return undefined;
  // The collector plans with the cluster as listed (context annotations are not applied there).
  const cluster = clusterOf(inventory, entry.cluster) ?? { name: entry.cluster, partition: 'aws' };
  const scope = permissionScopeOf(cluster, role);
  if (scope.status !== 'ok') return undefined;
  const input = simulationInputOf(inventory, entry, nodeClass, scope.value, role);
  // Only gaps this very inventory produces are explained by it.
  const planned = buildSimulations(input).gaps.filter((gap) => gap.group === group);
  if (!sameGaps(planned, recorded)) return undefined;
  const awsFacts = inventory.awsFacts.get(factsKeyOf(entry));
  const roots: (RootCause | undefined)[] = [];
  if (group === 'launch') {
    // buildSimulations' order: the NodePools gap, then the launch resources gap.
    if (input.nodePools.status === 'unavailable') {
      roots.push({ checkId: SCANNER_CAN_READ_CLUSTER, resource: clusterResource(entry.cluster) });
    }
    if (roots.length < recorded.length) {
      const checkId = launchRootCheck(awsFacts, nodeClass);
      roots.push(checkId === undefined ? undefined : { checkId });
    }
  } else if (group === 'pass-node-role') {
    const checkId = nodeRoleRootCheck(awsFacts);
    roots.push(checkId === undefined ? undefined : { checkId });
  }
  if (roots.length !== recorded.length) return undefined;
  const [first] = roots;
  return roots.every((root) => root !== undefined) ? first : undefined;
}

/** Stated in every permission finding: what the simulator cannot see. */
const SIMULATOR_LIMITS =
  "IAM's policy simulator evaluates the role's identity policies, its permissions boundary and SCPs. It does not evaluate session policies (Pod Identity association inline policies) or resource policies, so an allowed result can still be denied by them. NodeClasses whose requests differ only in context values the role's own policies and boundary test for presence alone (e.g. the karpenter.k8s.aws/ec2nodeclass tag) share one simulation; in an account of an organization, whose SCPs cannot be read, each NodeClass is then simulated again with its own values.";

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
    kind: denial.kind,
    action: denial.action,
    resource: denial.resource,
    decision: denial.decision,
    deniedBy: denial.deniedBy,
    ...(denial.boundary === undefined ? {} : { boundary: denial.boundary }),
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
    const facts = inventory.permissions.get(factsKeyOf(entry));
    if (facts === undefined) {
      return [
        {
          status: 'error',
          resource,
          message:
            'Not evaluated: the controller permissions were not simulated for this NodeClass.',
          readFault: readFaultOf('the controller permissions', undefined),
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
          causedBy: { checkId: CONTROLLER_ROLE_FOUND, resource: clusterResource(entry.cluster) },
          ...(role.status === 'unavailable'
            ? { readFault: readFaultOf("Karpenter's controller role", role) }
            : {}),
        },
      ];
    }
    // Karpenter's calls and resources differ by version: no verdict on an assumed one.
    const faulted = versionReadFault(cluster);
    if (faulted) return [versionUnreadDraft(resource, faulted, cluster)];
    // A role given by --controller-role while the controller is unread: the simulations took the
    // EKS name for Karpenter's CLUSTER_NAME, a guess when the policies look at it.
    const unreadController = controllerReadFault(cluster);
    if (unreadController && clusterNameMayMatter(facts, options.group, cluster.name)) {
      return [
        {
          ...versionUnreadDraft(resource, unreadController, cluster),
          message: `Not evaluated: the simulations took the EKS cluster name "${cluster.name}" for Karpenter's CLUSTER_NAME, which the controller role's policies may test (tags, instance profile paths), and ${unreadController.input} could not be read (${unreadController.reason}) to know it.`,
          evidence: {
            reason: unreadController.reason,
            input: unreadController.input,
            assumedClusterName: cluster.name,
          },
        },
      ];
    }
    const verdict = interpretGroup(facts, options.group);
    const notes = (facts.notes ?? []).filter(
      (note) => note.group === undefined || note.group === options.group
    );
    // A note on this group alone (wildcard resources) changes what the verdict means: in the message too.
    const said = notes
      .filter((note) => note.group !== undefined)
      .map((note) => ` ${note.message}`)
      .join('');
    const baseEvidence = {
      controllerRole: role.roleArn,
      controllerRoleSource: role.source,
      simulations: facts.simulations.filter((outcome) => outcome.request.group === options.group)
        .length,
      evaluated: verdict.evaluated,
      limits: SIMULATOR_LIMITS,
      ...(notes.length === 0 ? {} : { notes: notes.map((note) => note.message) }),
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
          message: `${options.subject} is denied for controller role ${role.roleArn}: ${first === undefined ? '' : describeDenial(first)}${more}.${said}`,
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
        ...verdict.inconclusive.map(describeInconclusive),
      ];
      const causedBy = gapRootCause(
        inventory,
        entry,
        nodeClass,
        role,
        facts,
        options.group,
        verdict
      );
      return [
        {
          status: 'error',
          resource,
          ...(causedBy === undefined ? {} : { causedBy }),
          message: `${options.subject} could not be verified for controller role ${role.roleArn}: ${problems[0] ?? 'nothing was simulated'}${problems.length > 1 ? ` (+${problems.length - 1} more)` : ''}.${said}`,
          evidence: {
            ...baseEvidence,
            unsimulated: verdict.unsimulated,
            inconclusive: verdict.inconclusive,
          },
          readFault: verdictReadFault(verdict),
        },
        ...extra,
      ];
    }
    return [
      {
        status: 'pass',
        resource,
        message: `${options.subject} is allowed for controller role ${role.roleArn} (${verdict.evaluated} action/resource pairs simulated with Karpenter's request context).${said}`,
        evidence: baseEvidence,
      },
      ...extra,
    ];
  });
}
