// Composition of a live scan: EKS discovery and Kubernetes reads (this file's source), then the
// enrichers that add AWS facts and permission simulations. The CLI and the Lambdas both call it.
import { EC2Client } from '@aws-sdk/client-ec2';
import { STSClient } from '@aws-sdk/client-sts';
import type { SimulationCacheOptions } from '../app/cached-simulator.js';
import { createAwsFactsEnricher } from '../app/collect-aws-facts.js';
import {
  createPermissionsEnricher,
  type PermissionsEnricherOptions,
} from '../app/collect-permissions.js';
import type { ScanPlan } from '../app/run-scan.js';
import type { SsmParameterScope } from '../core/ami/ssm-scope.js';
import type { InventoryEnricher } from '../core/ports/objects.js';
import type { KarpenterVersion } from '../core/version.js';
import { createLiveAwsFacts } from './aws/aws-facts-adapter.js';
import { requestHandlerOptions, scanDeadlinePlugin } from './aws/client-defaults.js';
import { type AwsClients, createAwsClients } from './aws/clients.js';
import { assumeDryRunRole, createDryRunProbe, TokenBucket } from './aws/dry-run.js';
import { type ClusterTagFilter, createEksReader } from './aws/eks-reader.js';
import { type CredentialsProvider, createEksTokenProvider } from './aws/eks-token.js';
import {
  ACCOUNT_DIRECTORY_MIN_CLUSTERS,
  accountDirectorySender,
  createIamAccountDirectory,
  withAccountDirectory,
} from './aws/iam-account-directory.js';
import {
  createIamRolePolicyReader,
  createIamSimulator,
  withAccountRoles,
} from './aws/iam-simulator.js';
import { rateLimited } from './aws/rate-limit.js';
import { type ClusterProgress, createClusterSource } from './kube/cluster-source.js';
import type { KubeLimits, KubeRetryPolicy } from './kube/kube-client.js';

export interface LivePlanOptions {
  readonly region: string;
  /** Explicit cluster names. Without them, `discover` lists the region's clusters. */
  readonly clusters?: readonly string[];
  readonly discover?: { readonly tagFilter?: ClusterTagFilter };
  /** Named profile; the default credential chain otherwise. Ignored when `clients` is given. */
  readonly profile?: string;
  /** Clock for token signing and caching. */
  readonly now: () => Date;
  /** Used when a cluster's controller image tag gives no version (`--karpenter-version`). */
  readonly karpenterVersion?: KarpenterVersion;
  readonly environment?: ScanPlan['environment'];
  /** One call per cluster as it finishes (the CLI prints a line when stderr is a TTY). */
  readonly onProgress?: (progress: ClusterProgress) => void;
  /** Shared SDK clients (Lambda module scope, tests); created from region/profile otherwise. */
  readonly clients?: AwsClients;
  /** Credentials that sign the EKS token; the EKS client's own credentials by default. */
  readonly credentials?: CredentialsProvider;
  readonly connectTimeoutMs?: number;
  readonly readTimeoutMs?: number;
  /** Kubernetes API deadlines and byte budgets (`DEFAULT_KUBE_LIMITS` otherwise). */
  readonly kubeLimits?: Partial<KubeLimits>;
  /** Kubernetes API retries of transient failures (`DEFAULT_KUBE_RETRY` otherwise). */
  readonly kubeRetry?: Partial<KubeRetryPolicy>;
  /** Per-cluster controller role override (`--controller-role CLUSTER=ARN`). */
  readonly controllerRoles?: Readonly<Record<string, string>>;
  /** Opt-in DryRun mode: the role to assume for RunInstances/CreateFleet DryRuns. */
  readonly dryRunRole?: string;
  /**
   * Custom SSM parameters the scan may read (the Lambdas: their role's grant). Absent: any the
   * credentials can read (the CLI, with the user's own credentials).
   */
  readonly ssmParameterScope?: SsmParameterScope;
  /** Simulation verdicts kept across scans (the Lambdas); the CLI simulates every time. */
  readonly simulationCache?: SimulationCacheOptions;
  /**
   * Answers the controller's simulations and gives its policies instead of IAM (the CLI's
   * `--controller-policy` documents); the controller role is still found in the cluster.
   */
  readonly permissions?: Pick<
    PermissionsEnricherOptions,
    'simulator' | 'policies' | 'policySource'
  >;
  /**
   * Read roles and policies with iam:GetAccountAuthorizationDetails when the scan names at least
   * ACCOUNT_DIRECTORY_MIN_CLUSTERS clusters (the CLI; the Lambdas scan one and are not granted it).
   */
  readonly accountDirectory?: boolean;
}

/** EC2 and STS clients holding the DryRun role's credentials, assumed once per plan. */
function dryRunProbe(clients: AwsClients, region: string, roleArn: string) {
  let assumed: ReturnType<typeof assumeDryRunRole> | undefined;
  const credentials = () => {
    assumed ??= assumeDryRunRole(clients.sts(region), roleArn);
    return assumed;
  };
  const ec2 = new EC2Client({ region, credentials, requestHandler: requestHandlerOptions() });
  ec2.middlewareStack.use(scanDeadlinePlugin('ec2'));
  const sts = new STSClient({ region, credentials, requestHandler: requestHandlerOptions() });
  sts.middlewareStack.use(scanDeadlinePlugin('sts'));
  return createDryRunProbe({
    ec2,
    sts,
    limiter: new TokenBucket({
      now: () => Date.now(),
      sleep: (milliseconds) => new Promise((resolve) => setTimeout(resolve, milliseconds)),
    }),
  });
}

export function createLivePlan(options: LivePlanOptions): ScanPlan {
  const clients =
    options.clients ??
    createAwsClients({
      region: options.region,
      ...(options.profile === undefined ? {} : { profile: options.profile }),
    });
  const eks = clients.eks(options.region);
  // The token must come from the same identity the EKS calls use: its access entry is checked.
  const credentials: CredentialsProvider = options.credentials ?? (() => eks.config.credentials());
  const iam = rateLimited(clients.iam(options.region), 'iam', clients.limiter);
  const directory =
    options.accountDirectory === true &&
    (options.clusters?.length ?? 0) >= ACCOUNT_DIRECTORY_MIN_CLUSTERS
      ? createIamAccountDirectory(iam)
      : undefined;
  // Started now, while the clusters are read: IAM's budget is the scan's bottleneck.
  void directory?.load();
  const objects = createClusterSource({
    region: options.region,
    ...(options.clusters === undefined ? {} : { clusters: options.clusters }),
    ...(options.discover === undefined ? {} : { discover: options.discover }),
    eks: createEksReader({ eks }),
    tokens: createEksTokenProvider({ region: options.region, credentials, now: options.now }),
    ...(options.karpenterVersion === undefined
      ? {}
      : { fallbackKarpenterVersion: options.karpenterVersion }),
    ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
    ...(options.connectTimeoutMs === undefined
      ? {}
      : { connectTimeoutMs: options.connectTimeoutMs }),
    ...(options.readTimeoutMs === undefined ? {} : { readTimeoutMs: options.readTimeoutMs }),
    ...(options.kubeLimits === undefined ? {} : { kubeLimits: options.kubeLimits }),
    ...(options.kubeRetry === undefined ? {} : { kubeRetry: options.kubeRetry }),
    ...(directory === undefined
      ? {}
      : {
          instanceProfileRole: async (profile: string) =>
            (await directory.load())?.instanceProfile(profile)?.Roles?.[0]?.RoleName,
        }),
  });
  const iamPolicies = createIamRolePolicyReader(
    directory === undefined ? iam : accountDirectorySender(iam, directory)
  );
  const facts = createLiveAwsFacts(
    {
      ec2: clients.ec2(options.region),
      ssm: clients.ssm(options.region),
      iam: clients.iam(options.region),
      kms: clients.kms(options.region),
    },
    { limiter: clients.limiter }
  );
  const enrichers: InventoryEnricher[] = [
    createAwsFactsEnricher({
      port: directory === undefined ? facts : withAccountDirectory(facts, directory),
      now: options.now(),
      ...(options.ssmParameterScope === undefined
        ? {}
        : { ssmParameterScope: options.ssmParameterScope }),
    }),
    // [issue 5] Permissions enricher: AFTER the AWS facts enricher (it simulates for the node
    //           role those facts resolve).
    createPermissionsEnricher({
      ...(options.permissions === undefined
        ? {
            simulator: createIamSimulator(clients.iam(options.region), {
              limiter: clients.limiter,
            }),
            policies: iamPolicies,
          }
        : withAccountRoles(options.permissions, iamPolicies)),
      ...(options.controllerRoles === undefined
        ? {}
        : { controllerRoles: options.controllerRoles }),
      ...(options.simulationCache === undefined ? {} : { cache: options.simulationCache }),
      ...(options.dryRunRole === undefined
        ? {}
        : { dryRun: dryRunProbe(clients, options.region, options.dryRunRole) }),
    }),
  ];
  return {
    objects,
    enrichers,
    ...(options.environment === undefined ? {} : { environment: options.environment }),
  };
}
