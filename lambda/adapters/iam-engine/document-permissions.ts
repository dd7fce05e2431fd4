// PolicySimulatorPort and RolePolicyPort over given policy documents, evaluated by the IAM policy
// engine: what `scan --controller-policy FILE… [--permissions-boundary FILE]` simulates in place of
// the controller role's own policies, whatever role the scan resolved. The engine is passed in (see
// load.ts): this module never imports it.
import type { SimulatePrincipalPolicyCommandInput } from '@aws-sdk/client-iam';
import type { SimulationRequest, SimulationResult } from '../../core/facts/permissions.js';
import type { RolePolicySet } from '../../core/iam/simulation-cache.js';
import type { PolicySimulatorPort, RolePolicyPort } from '../../core/ports/permissions.js';
import { resultsFromSdk } from '../aws/iam-simulator.js';
import type { IamEngine } from './load.js';
import type { PrincipalPolicyDocuments } from './simulate-principal-policy.js';

/** The request as SimulatePrincipalPolicy input, as the live simulator sends it. */
function sdkInputOf(request: SimulationRequest): SimulatePrincipalPolicyCommandInput {
  return {
    PolicySourceArn: request.principalArn,
    ActionNames: [...request.actions],
    ...(request.resourceArns.length === 0 ? {} : { ResourceArns: [...request.resourceArns] }),
    ...(request.context.length === 0
      ? {}
      : {
          ContextEntries: request.context.map((entry) => ({
            ContextKeyName: entry.key,
            ContextKeyValues: [...entry.values],
            ContextKeyType: entry.type,
          })),
        }),
  };
}

/** Every action × resource of the request, answered by the engine over `documents`. */
export async function simulateWithEngine(
  engine: IamEngine,
  documents: PrincipalPolicyDocuments,
  request: SimulationRequest
): Promise<SimulationResult[]> {
  const output = await engine(documents, sdkInputOf(request));
  return resultsFromSdk(output.EvaluationResults ?? []);
}

/** Simulates any principal as if `documents` were its policies (and SCPs, when given). */
export function createDocumentPolicySimulator(
  documents: PrincipalPolicyDocuments,
  engine: IamEngine
): PolicySimulatorPort {
  return { simulate: (request) => simulateWithEngine(engine, documents, request) };
}

/**
 * The same documents as any role's policies, as a live read names them (identity policies in
 * order, the boundary apart), so the checks see which statements decide and name their Sids.
 */
export function createDocumentRolePolicyReader(
  documents: PrincipalPolicyDocuments
): RolePolicyPort {
  const { boundary } = documents;
  const set: RolePolicySet = {
    identity: documents.identity.map((policy) => policy.document),
    identityNames: documents.identity.map((policy) => policy.name),
    ...(boundary === undefined
      ? {}
      : { boundary: boundary.document, boundaryName: boundary.name ?? 'permissions boundary' }),
  };
  return {
    policySet: async () => set,
    async documents() {
      return set.boundary === undefined ? set.identity : [...set.identity, set.boundary];
    },
  };
}
