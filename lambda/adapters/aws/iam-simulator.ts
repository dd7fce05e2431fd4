// PolicySimulatorPort over iam:SimulatePrincipalPolicy (aws-facts §3).
import {
  type EvaluationResult,
  type IAMClient,
  type ResourceSpecificResult,
  SimulatePrincipalPolicyCommand,
  type Statement,
} from '@aws-sdk/client-iam';
import type {
  MatchedStatement,
  SimulationDecision,
  SimulationRequest,
  SimulationResult,
} from '../../core/facts/permissions.js';
import type { PolicySimulatorPort } from '../../core/iam/ports.js';
import { toSourceUnavailable } from './aws-errors.js';
import { collectPages } from './paginate.js';
import { type ApiRateLimiter, rateLimited } from './rate-limit.js';

export const iamSimulatorActions = ['iam:SimulatePrincipalPolicy'] as const;

/** PMapper chunks ResourceArns by 20 after hitting throttling with larger calls (aws-facts §3.4). */
export const RESOURCE_ARN_CHUNK_SIZE = 20;

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

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let index = 0; index < items.length; index += size)
    out.push(items.slice(index, index + size));
  return out.length > 0 ? out : [[]];
}

export function createIamSimulator(
  sender: IamSimulatorSender,
  options: { readonly chunkSize?: number; readonly limiter?: ApiRateLimiter } = {}
): PolicySimulatorPort {
  const chunkSize = options.chunkSize ?? RESOURCE_ARN_CHUNK_SIZE;
  const iam = options.limiter ? rateLimited(sender, 'iam', options.limiter) : sender;
  return {
    async simulate(request: SimulationRequest): Promise<readonly SimulationResult[]> {
      const contextEntries = request.context.map((entry) => ({
        ContextKeyName: entry.key,
        ContextKeyValues: [...entry.values],
        ContextKeyType: entry.type,
      }));
      const results: SimulationResult[] = [];
      for (const resourceArns of chunks(request.resourceArns, chunkSize)) {
        try {
          const evaluations = await collectPages(
            (marker) =>
              iam.send(
                new SimulatePrincipalPolicyCommand({
                  PolicySourceArn: request.principalArn,
                  ActionNames: [...request.actions],
                  ...(resourceArns.length === 0 ? {} : { ResourceArns: resourceArns }),
                  ...(contextEntries.length === 0 ? {} : { ContextEntries: contextEntries }),
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
