// The one way product code reaches the IAM policy engine: a dynamic import, so bundles keep
// @cloud-copilot/iam-simulate (AGPL-3.0, an optional peer dependency) external and a CLI without
// it works until a world file asks for policy evaluation.
import type {
  SimulatePrincipalPolicyCommandInput,
  SimulatePrincipalPolicyCommandOutput,
} from '@aws-sdk/client-iam';
import { SourceUnavailableError } from '../../shared/errors.js';
import type { PrincipalPolicyDocuments } from './simulate-principal-policy.js';

export const IAM_ENGINE_PACKAGE = '@cloud-copilot/iam-simulate';

/** iam:SimulatePrincipalPolicy over the principal's policy documents. */
export type IamEngine = (
  policies: PrincipalPolicyDocuments,
  input: SimulatePrincipalPolicyCommandInput
) => Promise<SimulatePrincipalPolicyCommandOutput>;

type EngineModule = { readonly simulatePrincipalPolicy: IamEngine };

function isMissingPackage(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    String(message).includes('@cloud-copilot/')
  );
}

/**
 * The engine, or a `not-installed` SourceUnavailableError naming the package to install.
 * `importEngine` stands in for the import in tests.
 */
export async function loadIamEngine(
  importEngine: () => Promise<EngineModule> = () => import('./simulate-principal-policy.js')
): Promise<IamEngine> {
  try {
    return (await importEngine()).simulatePrincipalPolicy;
  } catch (error) {
    if (!isMissingPackage(error)) throw error;
    throw new SourceUnavailableError(
      'iam:SimulatePrincipalPolicy',
      'not-installed',
      `Evaluating the world file's policy documents needs the optional package ${IAM_ENGINE_PACKAGE}, which is not installed (npm install ${IAM_ENGINE_PACKAGE}).`,
      { cause: error }
    );
  }
}

/** An engine that loads on its first simulation (once), so nothing is imported until needed. */
export function lazyIamEngine(load: () => Promise<IamEngine> = () => loadIamEngine()): IamEngine {
  let loading: Promise<IamEngine> | undefined;
  return async (policies, input) => {
    loading ??= load();
    return (await loading)(policies, input);
  };
}
