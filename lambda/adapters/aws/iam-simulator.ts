// PolicySimulatorPort over iam:SimulatePrincipalPolicy, and RolePolicyPort over the role's policy
// documents (so the enricher knows which context values the policies compare).

import {
  type EvaluationResult,
  GetPolicyCommand,
  GetPolicyVersionCommand,
  GetRoleCommand,
  GetRolePolicyCommand,
  type IAMClient,
  ListAttachedRolePoliciesCommand,
  ListRolePoliciesCommand,
  type ResourceSpecificResult,
  SimulatePrincipalPolicyCommand,
  type Statement,
} from '@aws-sdk/client-iam';
import type { Role } from '../../core/facts/aws.js';
import type {
  MatchedStatement,
  SimulationDecision,
  SimulationRequest,
  SimulationResult,
} from '../../core/facts/permissions.js';
import { bareIamName } from '../../core/iam/arns.js';
import { RESULTS_PER_CALL } from '../../core/iam/simulation-batches.js';
import type { RolePolicySet } from '../../core/iam/simulation-cache.js';
import type { PolicySimulatorPort, RolePolicyPort } from '../../core/ports/permissions.js';
import { chunks } from '../../shared/chunks.js';
import { isNotFound, toSourceUnavailable } from './aws-errors.js';
import { collectPages } from './paginate.js';
import { type ApiRateLimiter, rateLimited } from './rate-limit.js';

export const iamSimulatorActions = [
  'iam:SimulatePrincipalPolicy',
  'iam:GetRole',
  'iam:ListRolePolicies',
  'iam:GetRolePolicy',
  'iam:ListAttachedRolePolicies',
  'iam:GetPolicy',
  'iam:GetPolicyVersion',
] as const;

/**
 * Results come one per action and resource, up to MaxItems (1,000 asked; 100 by default) to a
 * page. The scan packs its requests to fit one page (simulation-batches.ts); a larger request is
 * cut here into calls that each fit, so no call pages unless IAM returns fewer than asked. IAM documents no cap on ResourceArns themselves; PMapper's
 * 20-ARN chunks were a response to throttling, which a call count bounded by results addresses.
 */
export type IamSimulatorSender = Pick<IAMClient, 'send'>;

function decisionOf(value: string | undefined): SimulationDecision {
  return value === 'allowed' || value === 'explicitDeny' ? value : 'implicitDeny';
}

function statementsOf(statements: readonly Statement[] | undefined): MatchedStatement[] {
  return (statements ?? []).map((statement) => ({
    ...(statement.SourcePolicyId === undefined ? {} : { sourcePolicyId: statement.SourcePolicyId }),
    ...(statement.SourcePolicyType === undefined
      ? {}
      : { sourcePolicyType: statement.SourcePolicyType }),
  }));
}

function details(
  result: EvaluationResult
): Pick<SimulationResult, 'allowedByOrganizations' | 'allowedByPermissionsBoundary'> {
  const organizations = result.OrganizationsDecisionDetail?.AllowedByOrganizations;
  const boundary = result.PermissionsBoundaryDecisionDetail?.AllowedByPermissionsBoundary;
  return {
    ...(organizations === undefined ? {} : { allowedByOrganizations: organizations }),
    ...(boundary === undefined ? {} : { allowedByPermissionsBoundary: boundary }),
  };
}

function fromResourceResult(
  result: EvaluationResult,
  resource: ResourceSpecificResult
): SimulationResult {
  const boundary = resource.PermissionsBoundaryDecisionDetail?.AllowedByPermissionsBoundary;
  return {
    action: result.EvalActionName ?? '',
    resource: resource.EvalResourceName ?? '*',
    decision: decisionOf(resource.EvalResourceDecision),
    ...details(result),
    ...(boundary === undefined ? {} : { allowedByPermissionsBoundary: boundary }),
    matchedStatements: statementsOf(resource.MatchedStatements),
    missingContextValues: resource.MissingContextValues ?? [],
  };
}

/**
 * One result per action and resource. IAM now returns one EvaluationResult per action with the
 * per-resource verdicts in ResourceSpecificResults (the top level is their aggregate); older
 * responses had one result per resource, which the fallback covers.
 */
export function resultsFromSdk(results: readonly EvaluationResult[]): SimulationResult[] {
  return results.flatMap((result) => {
    const perResource = result.ResourceSpecificResults ?? [];
    if (perResource.length > 0)
      return perResource.map((resource) => fromResourceResult(result, resource));
    return [
      {
        action: result.EvalActionName ?? '',
        resource: result.EvalResourceName ?? '*',
        decision: decisionOf(result.EvalDecision),
        ...details(result),
        matchedStatements: statementsOf(result.MatchedStatements),
        missingContextValues: result.MissingContextValues ?? [],
      },
    ];
  });
}

/** A request with no resources is still one call (IAM then simulates against `*`). */
function nonEmptyChunks<T>(items: readonly T[], size: number): T[][] {
  const parts = chunks(items, size);
  return parts.length > 0 ? parts : [[]];
}

export function createIamSimulator(
  sender: IamSimulatorSender,
  options: { readonly resultsPerCall?: number; readonly limiter?: ApiRateLimiter } = {}
): PolicySimulatorPort {
  const resultsPerCall = options.resultsPerCall ?? RESULTS_PER_CALL;
  const iam = options.limiter ? rateLimited(sender, 'iam', options.limiter) : sender;
  return {
    async simulate(request: SimulationRequest): Promise<readonly SimulationResult[]> {
      const contextEntries = request.context.map((entry) => ({
        ContextKeyName: entry.key,
        ContextKeyValues: [...entry.values],
        ContextKeyType: entry.type,
      }));
      const results: SimulationResult[] = [];
      const calls = nonEmptyChunks(request.actions, resultsPerCall).flatMap((actions) =>
        nonEmptyChunks(
          request.resourceArns,
          Math.max(1, Math.floor(resultsPerCall / Math.max(1, actions.length)))
        ).map((resourceArns) => ({
          actions,
          resourceArns,
        }))
      );
      for (const { actions, resourceArns } of calls) {
        try {
          const evaluations = await collectPages(
            'iam:SimulatePrincipalPolicy',
            (marker) =>
              iam.send(
                new SimulatePrincipalPolicyCommand({
                  PolicySourceArn: request.principalArn,
                  ActionNames: actions,
                  ...(resourceArns.length === 0 ? {} : { ResourceArns: resourceArns }),
                  ...(contextEntries.length === 0 ? {} : { ContextEntries: contextEntries }),
                  // The page the calls are packed to: without it IAM pages at 100.
                  MaxItems: resultsPerCall,
                  ...(marker === undefined ? {} : { Marker: marker }),
                })
              ),
            (page) => page.EvaluationResults,
            (page) => (page.IsTruncated ? page.Marker : undefined)
          );
          results.push(...resultsFromSdk(evaluations));
        } catch (error) {
          throw toSourceUnavailable('iam:SimulatePrincipalPolicy', error);
        }
      }
      return results;
    },
  };
}

/** IAM returns policy documents URL-encoded. */
function decoded(document: string | undefined): string {
  if (document === undefined) throw new Error('no policy document');
  return decodeURIComponent(document);
}

/**
 * RolePolicyPort over IAM: inline policies, attached managed policies' default versions and the
 * permissions boundary. Managed policies are read once per reader (AWS managed ones are shared).
 * Service control policies are not readable from the member account.
 */
export function createIamRolePolicyReader(sender: IamSimulatorSender): RolePolicyPort {
  const managed = new Map<string, Promise<string>>();
  const managedDocument = (policyArn: string): Promise<string> => {
    const cached = managed.get(policyArn);
    if (cached) return cached;
    const read = (async () => {
      const policy = await sender.send(new GetPolicyCommand({ PolicyArn: policyArn }));
      const version = await sender.send(
        new GetPolicyVersionCommand({
          PolicyArn: policyArn,
          VersionId: policy.Policy?.DefaultVersionId,
        })
      );
      return decoded(version.PolicyVersion?.Document);
    })();
    managed.set(policyArn, read);
    read.catch(() => managed.delete(policyArn));
    return read;
  };
  const policySet = async (roleArn: string, known?: Role): Promise<RolePolicySet> => {
    const RoleName = bareIamName(roleArn);
    try {
      const boundaryArn =
        known === undefined
          ? (await sender.send(new GetRoleCommand({ RoleName }))).Role?.PermissionsBoundary
              ?.PermissionsBoundaryArn
          : known.permissionsBoundaryArn;
      const inlineNames = await collectPages(
        'iam:ListRolePolicies',
        (marker) =>
          sender.send(
            new ListRolePoliciesCommand({ RoleName, ...(marker ? { Marker: marker } : {}) })
          ),
        (page) => page.PolicyNames,
        (page) => (page.IsTruncated ? page.Marker : undefined)
      );
      const attached =
        known?.attachedPolicyArns ??
        (
          await collectPages(
            'iam:ListAttachedRolePolicies',
            (marker) =>
              sender.send(
                new ListAttachedRolePoliciesCommand({
                  RoleName,
                  ...(marker ? { Marker: marker } : {}),
                })
              ),
            (page) => page.AttachedPolicies,
            (page) => (page.IsTruncated ? page.Marker : undefined)
          )
        ).flatMap((policy) => (policy.PolicyArn ? [policy.PolicyArn] : []));
      const identity: string[] = [];
      for (const PolicyName of inlineNames) {
        const inline = await sender.send(new GetRolePolicyCommand({ RoleName, PolicyName }));
        identity.push(decoded(inline.PolicyDocument));
      }
      for (const policyArn of attached) identity.push(await managedDocument(policyArn));
      const identityNames = [...inlineNames, ...attached.map(bareIamName)];
      return boundaryArn
        ? {
            identity,
            identityNames,
            boundary: await managedDocument(boundaryArn),
            boundaryName: bareIamName(boundaryArn),
          }
        : { identity, identityNames };
    } catch (error) {
      throw toSourceUnavailable('iam:GetRolePolicy', error);
    }
  };
  return {
    policySet,
    async documents(roleArn) {
      const { identity, boundary } = await policySet(roleArn);
      return boundary === undefined ? identity : [...identity, boundary];
    },
    async roleExists(RoleName) {
      try {
        await sender.send(new GetRoleCommand({ RoleName }));
        return true;
      } catch (error) {
        if (isNotFound(error)) return false;
        throw toSourceUnavailable('iam:GetRole', error);
      }
    },
  };
}

/**
 * Given documents stand in for the controller's policies (`--controller-policy`); which roles exist
 * in the account (the Spot service-linked role) is still read from IAM by `iam`.
 */
export function withAccountRoles<T extends { readonly policies?: RolePolicyPort }>(
  permissions: T,
  iam: Pick<RolePolicyPort, 'roleExists'>
): T {
  const { policies } = permissions;
  const { roleExists } = iam;
  if (policies === undefined || roleExists === undefined) return permissions;
  return { ...permissions, policies: { ...policies, roleExists } };
}
