// `scan … --controller-policy FILE… [--permissions-boundary FILE]`: the controller checks evaluate
// the given policy documents in place of the controller role's own policies, with the IAM policy
// engine (@cloud-copilot/iam-simulate, loaded by load.ts), before anyone applies them. Imported only
// when the flag is given; every scan mode composes the same simulator and policy reader.
import { createManifestSource } from '../adapters/files/manifest-source.js';
import {
  createDocumentPolicySimulator,
  createDocumentRolePolicyReader,
} from '../adapters/iam-engine/document-permissions.js';
import { IAM_ENGINE_PACKAGE, type IamEngine, loadIamEngine } from '../adapters/iam-engine/load.js';
import { type PolicyFileOptions, readPolicyFiles } from '../adapters/iam-engine/policy-files.js';
import type { PrincipalPolicyDocuments } from '../adapters/iam-engine/simulate-principal-policy.js';
import {
  createPermissionsEnricher,
  type PermissionsEnricherOptions,
} from '../app/collect-permissions.js';
import type { ScanPlan } from '../app/run-scan.js';
import type { ClusterContext } from '../core/inventory.js';
import { ConfigError, InputError, SourceUnavailableError } from '../shared/errors.js';

/** The documents, read and checked, and the engine that evaluates them. */
export interface ControllerPolicy {
  readonly documents: PrincipalPolicyDocuments;
  readonly engine: IamEngine;
}

/** Where the scan's other facts come from: says what else the verdicts account for. */
export type ControllerPolicyMode = 'manifests' | 'world' | 'live';

/** `identityPolicyErrors: {name: [{path, message}]}` of iam-simulate's refusal, as `path: message`. */
function engineProblems(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  try {
    const details = JSON.parse(message.slice(message.indexOf('{'))) as Record<string, unknown>;
    const problems = Object.values(details).flatMap((byPolicy) =>
      typeof byPolicy === 'object' && byPolicy !== null
        ? Object.values(byPolicy).flatMap((list: unknown) =>
            Array.isArray(list)
              ? list.map(
                  (item: { path?: unknown; message?: unknown }) =>
                    `${String(item.path ?? '(root)')}: ${String(item.message ?? 'invalid')}`
                )
              : []
          )
        : []
    );
    if (problems.length > 0) return problems.slice(0, 3).join('; ');
  } catch {
    // Not iam-simulate's validation report: its message as it is.
  }
  return message;
}

/**
 * Each document on its own through the engine, so a document the engine cannot evaluate is refused
 * now, naming it, rather than turning every finding into an error.
 */
async function checkWithEngine(engine: IamEngine, documents: PrincipalPolicyDocuments) {
  const probe = {
    PolicySourceArn: 'arn:aws:iam::123456789012:role/probe',
    ActionNames: ['ec2:DescribeImages'],
  };
  const { boundary } = documents;
  const alone: { readonly label: string; readonly policies: PrincipalPolicyDocuments }[] = [
    ...documents.identity.map((policy) => ({
      label: `--controller-policy ${policy.name}`,
      policies: { identity: [policy] },
    })),
    ...(boundary === undefined
      ? []
      : [
          {
            label: `--permissions-boundary ${boundary.name ?? ''}`,
            policies: { identity: [], boundary },
          },
        ]),
  ];
  for (const { label, policies } of alone) {
    try {
      await engine(policies, probe);
    } catch (error) {
      throw new InputError(`${label}: the policy engine refuses it: ${engineProblems(error)}`);
    }
  }
}

/**
 * Reads and checks the files, then loads the engine: a file that cannot be used is an InputError
 * naming it, a missing engine a ConfigError naming the package. `loadEngine` stands in for the
 * import in tests.
 */
export async function loadControllerPolicy(
  files: PolicyFileOptions,
  loadEngine: () => Promise<IamEngine> = () => loadIamEngine()
): Promise<ControllerPolicy> {
  const documents = await readPolicyFiles(files);
  let engine: IamEngine;
  try {
    engine = await loadEngine();
  } catch (error) {
    if (error instanceof SourceUnavailableError && error.reason === 'not-installed') {
      throw new ConfigError(
        `--controller-policy evaluates the documents with the IAM policy engine ${IAM_ENGINE_PACKAGE}, an optional package that is not installed: npm install ${IAM_ENGINE_PACKAGE}`,
        { cause: error }
      );
    }
    throw error;
  }
  await checkWithEngine(engine, documents);
  return { documents, engine };
}

const ELSEWHERE: Readonly<Record<ControllerPolicyMode | 'world-scps', string>> = {
  manifests: 'No service control policy is evaluated.',
  world: 'No service control policy is evaluated (the world file has none).',
  'world-scps': "The world file's service control policies apply.",
  live: 'IAM was not asked: service control policies, which cannot be read, are not evaluated.',
};

/**
 * The permission enricher's simulator, policy reader and evidence note: every controller principal
 * the scan resolves is simulated as if the documents were its policies (with `scps`, the world's).
 */
export function controllerPolicyPermissions(
  policy: ControllerPolicy,
  mode: ControllerPolicyMode,
  scps: NonNullable<PrincipalPolicyDocuments['scps']> = []
): Pick<PermissionsEnricherOptions, 'simulator' | 'policies' | 'policySource'> {
  const documents = { ...policy.documents, ...(scps.length === 0 ? {} : { scps }) };
  const given = [
    `--controller-policy ${policy.documents.identity.map((document) => document.name).join(', ')}`,
    ...(policy.documents.boundary === undefined
      ? []
      : [`--permissions-boundary ${policy.documents.boundary.name ?? ''}`]),
  ].join('; ');
  const elsewhere = ELSEWHERE[mode === 'world' && scps.length > 0 ? 'world-scps' : mode];
  return {
    simulator: createDocumentPolicySimulator(documents, policy.engine),
    policies: createDocumentRolePolicyReader(documents),
    policySource: `Simulated over the policy documents given to the scan (${given}) in place of the controller role's own policies and permissions boundary, by the IAM policy engine ${IAM_ENGINE_PACKAGE}. ${elsewhere}`,
  };
}

export interface ControllerPolicyManifestPlanOptions {
  readonly paths: readonly string[];
  /** `--crd FILE…`: Karpenter's CRDs the manifests are admitted by. */
  readonly crdFiles?: readonly string[];
  /** Named after `--controller-role CLUSTER=…`, with the region of `--region`. */
  readonly cluster: ClusterContext;
  readonly readStdin: () => Promise<string>;
  /** The controller role the manifests' cluster runs Karpenter as (`--controller-role`). */
  readonly controllerRole: string;
  readonly environment: 'production' | 'non-production';
  readonly policy: ControllerPolicy;
}

/**
 * Manifests without AWS facts: the controller checks only, with the cluster, region and account the
 * flags give, and wildcard resource ARNs for classes whose resources nothing resolved.
 */
export function buildControllerPolicyManifestPlan(
  options: ControllerPolicyManifestPlanOptions
): ScanPlan {
  return {
    environment: options.environment,
    objects: createManifestSource({
      paths: options.paths,
      cluster: options.cluster,
      readStdin: options.readStdin,
      ...(options.crdFiles === undefined ? {} : { crdFiles: options.crdFiles }),
    }),
    enrichers: [
      createPermissionsEnricher({
        ...controllerPolicyPermissions(options.policy, 'manifests'),
        controllerRoles: { [options.cluster.name]: options.controllerRole },
        wildcardUnresolvedLaunch: true,
      }),
    ],
  };
}
