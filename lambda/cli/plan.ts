// Live-mode modules (and with them the AWS SDK) are imported when a live scan is planned, never
// for manifest or --world scans: the bundled CLI then starts without parsing the SDK.
import { limitsFromEnv } from '../adapters/files/limits.js';
import { createManifestSource } from '../adapters/files/manifest-source.js';
import type { PolicyFileOptions } from '../adapters/iam-engine/policy-files.js';
import type { ClusterProgress } from '../adapters/kube/cluster-source.js';
import type { ScanPlan } from '../app/run-scan.js';
import type { ClusterContext } from '../core/inventory.js';
import { redactSecrets } from '../core/redact.js';
import { partitionOf, regionProblem } from '../core/region.js';
import { parseKarpenterVersion } from '../core/version.js';
import { ConfigError } from '../shared/errors.js';
import { terminalSafe } from './terminal.js';

export interface ScanCliOptions {
  readonly paths: readonly string[];
  readonly clusters: readonly string[];
  readonly region?: string;
  readonly world?: string;
  readonly aws: boolean;
  readonly profile?: string;
  readonly karpenterVersion?: string;
  /** `--kubernetes-version`: the cluster version alias terms resolve for, when no cluster is read. */
  readonly kubernetesVersion?: string;
  readonly environment: 'production' | 'non-production';
  readonly readStdin: () => Promise<string>;
  /** Scan time (AMI deprecation, selection); the CLI passes its clock. */
  readonly now?: Date;
  /** `--controller-role CLUSTER=ARN` values: the controller role to simulate, per cluster. */
  readonly controllerRoles?: readonly string[];
  /** `--dry-run-role ARN`: opt-in EC2 DryRun with this assumed role (live scans only). */
  readonly dryRunRole?: string;
  /** `--controller-policy FILE…`: policy documents simulated in place of the controller role's. */
  readonly controllerPolicies?: readonly string[];
  /** `--permissions-boundary FILE`: the boundary simulated with them. */
  readonly permissionsBoundary?: string;
  /** `--crd FILE…`: Karpenter's CRDs the manifests are admitted by (manifest scans only). */
  readonly crdFiles?: readonly string[];
  /** Called as each live cluster finishes (the CLI prints it when stderr is a TTY). */
  readonly onProgress?: (progress: ClusterProgress) => void;
}

/** One stderr line per live cluster: `[2/5] prod: 3 EC2NodeClasses`. */
export function formatClusterProgress(progress: ClusterProgress): string {
  const prefix = `[${progress.index}/${progress.total}] ${terminalSafe(progress.cluster)}`;
  if (progress.outcome === 'ok') {
    return `${prefix}: ${progress.nodeClasses} EC2NodeClass${progress.nodeClasses === 1 ? '' : 'es'}\n`;
  }
  // The message may quote the API server's answer: never a credential, never a terminal escape.
  return `${prefix}: not read (${terminalSafe(redactSecrets(progress.message ?? 'unavailable'))})\n`;
}

/** `--cluster NAME…`: live EKS clusters (Kubernetes objects through the EKS API). */
async function buildClusterPlan(options: ScanCliOptions): Promise<ScanPlan> {
  if (options.paths.length > 0) {
    throw new ConfigError('give either manifest paths or --cluster, not both');
  }
  if (options.region === undefined) {
    throw new ConfigError('--cluster needs --region (the region of the EKS clusters)');
  }
  const { karpenterVersion } = manifestClusterContext(options);
  const controllerRoles = parseControllerRoles(options.controllerRoles);
  const unknown = Object.keys(controllerRoles).filter(
    (cluster) => !options.clusters.includes(cluster)
  );
  if (unknown.length > 0) {
    throw new ConfigError(
      `--controller-role names ${unknown.join(', ')}, which is not a --cluster of this scan`
    );
  }
  // Before any AWS call: a file that cannot be used ends the scan first.
  const files = controllerPolicyFilesOf(options);
  const permissions =
    files === undefined
      ? undefined
      : await import('./plan-controller-policy.js').then(
          async ({ controllerPolicyPermissions, loadControllerPolicy }) =>
            controllerPolicyPermissions(await loadControllerPolicy(files), 'live')
        );
  const [
    { createAwsClients },
    { resolveRegion, verifyAwsAccess },
    { createLivePlan },
    kube,
    { awsTimeoutsFromEnv },
  ] = await Promise.all([
    import('../adapters/aws/clients.js'),
    import('./aws-preflight.js'),
    import('../adapters/live-plan.js'),
    import('../adapters/kube/kube-client.js'),
    import('../adapters/aws/client-defaults.js'),
  ]);
  const clients = createAwsClients({
    region: options.region,
    ...(options.profile === undefined ? {} : { profile: options.profile }),
    timeouts: awsTimeoutsFromEnv(process.env),
  });
  const region = await resolveRegion(clients, options.region);
  // Credentials that do not work stop the scan here: no cluster would be readable.
  await verifyAwsAccess(clients.sts(region), region);
  return createLivePlan({
    region,
    clusters: options.clusters,
    clients,
    now: () => options.now ?? new Date(),
    ...(karpenterVersion ? { karpenterVersion } : {}),
    ...(Object.keys(controllerRoles).length === 0 ? {} : { controllerRoles }),
    ...(options.dryRunRole === undefined ? {} : { dryRunRole: options.dryRunRole }),
    ...(permissions === undefined ? {} : { permissions }),
    environment: options.environment,
    accountDirectory: true,
    kubeLimits: limitsFromEnv(kube.DEFAULT_KUBE_LIMITS, kube.KUBE_LIMIT_ENV, process.env),
    kubeRetry: limitsFromEnv(kube.DEFAULT_KUBE_RETRY, kube.KUBE_RETRY_ENV, process.env),
    ...limitsFromEnv(kube.DEFAULT_KUBE_TIMEOUTS, kube.KUBE_TIMEOUT_ENV, process.env),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
}

/** `CLUSTER=ROLE_ARN` pairs → cluster → role ARN; anything else is a usage error. */
function parseControllerRoles(values: readonly string[] = []): Record<string, string> {
  const roles: Record<string, string> = {};
  for (const value of values) {
    const separator = value.indexOf('=');
    const cluster = value.slice(0, separator).trim();
    const arn = value.slice(separator + 1).trim();
    if (separator <= 0 || !/^arn:[a-z-]+:iam::\d{12}:role\/.+/.test(arn)) {
      throw new ConfigError(
        `--controller-role "${value}" is not CLUSTER=arn:<partition>:iam::<account>:role/<name>`
      );
    }
    roles[cluster] = arn;
  }
  return roles;
}

/** `--controller-policy`/`--permissions-boundary`, or undefined without them. */
function controllerPolicyFilesOf(options: ScanCliOptions): PolicyFileOptions | undefined {
  const policies = options.controllerPolicies ?? [];
  if (policies.length === 0) {
    if (options.permissionsBoundary !== undefined) {
      throw new ConfigError(
        '--permissions-boundary is simulated with the documents of --controller-policy: give --controller-policy FILE too'
      );
    }
    return undefined;
  }
  return {
    policies,
    ...(options.permissionsBoundary === undefined ? {} : { boundary: options.permissionsBoundary }),
  };
}

/**
 * Manifests checked against `--controller-policy` documents have no cluster to read: the one
 * `--controller-role CLUSTER=ARN` names the cluster (Karpenter's tags and the policy's conditions
 * carry its name) and the account (the role's).
 */
function controllerPolicyCluster(
  options: ScanCliOptions,
  how: string
): { readonly cluster: string; readonly controllerRole: string } {
  const roles = Object.entries(parseControllerRoles(options.controllerRoles));
  const [first] = roles;
  if (first === undefined) {
    throw new ConfigError(
      `--controller-policy ${how} needs the cluster and its controller role: add --controller-role CLUSTER=arn:aws:iam::ACCOUNT:role/NAME (CLUSTER as Karpenter's CLUSTER_NAME; the account is the role's)`
    );
  }
  if (roles.length > 1) {
    throw new ConfigError(
      `--controller-policy ${how} checks one cluster: give one --controller-role, not ${roles.length}`
    );
  }
  const [cluster, controllerRole] = first;
  return { cluster, controllerRole };
}

/** The role must live in the region's partition: its ARN is what IAM's conditions compare. */
function samePartition(controllerRole: string, region: string): void {
  const partition = partitionOf(region);
  if (controllerRole.split(':')[1] !== partition) {
    throw new ConfigError(
      `--controller-role ${controllerRole} is not in partition ${partition} of region ${region}`
    );
  }
}

/** `scan paths… --controller-policy FILE… --region R --controller-role CLUSTER=ARN` (offline). */
async function buildManifestControllerPolicyPlan(
  options: ScanCliOptions,
  files: PolicyFileOptions
): Promise<ScanPlan> {
  if (options.dryRunRole !== undefined) {
    throw new ConfigError('--dry-run-role calls EC2 and needs a live scan (--cluster)');
  }
  const { cluster, controllerRole } = controllerPolicyCluster(options, 'on manifests');
  if (options.region === undefined) {
    throw new ConfigError(
      `--controller-policy on manifests needs --region (the region of cluster "${cluster}")`
    );
  }
  samePartition(controllerRole, options.region);
  const { buildControllerPolicyManifestPlan, loadControllerPolicy } = await import(
    './plan-controller-policy.js'
  );
  return buildControllerPolicyManifestPlan({
    paths: options.paths,
    ...crdFilesOf(options),
    cluster: { ...manifestClusterContext(options), name: cluster },
    controllerRole,
    readStdin: options.readStdin,
    environment: options.environment,
    policy: await loadControllerPolicy(files),
  });
}

export type ScanMode = 'manifests' | 'world' | 'live';

/**
 * Where AWS facts come from, explicitly (README, "World-state files and live AWS"): `--world` is offline; `--aws`,
 * `--profile` or `--cluster` is live; otherwise the scan never touches the network.
 */
function scanModeOf(options: ScanCliOptions): ScanMode {
  if (options.world !== undefined) {
    if (options.aws || options.profile !== undefined) {
      throw new ConfigError('--world cannot be combined with --aws or --profile');
    }
    return 'world';
  }
  if (options.aws || options.profile !== undefined || options.clusters.length > 0) return 'live';
  return 'manifests';
}

function manifestClusterContext(options: ScanCliOptions): ClusterContext {
  const karpenterVersion = parseKarpenterVersion(options.karpenterVersion);
  if (options.karpenterVersion !== undefined && !karpenterVersion) {
    throw new ConfigError(
      `--karpenter-version "${options.karpenterVersion}" is not a version such as 1.7.0 or v1.2.1`
    );
  }
  return {
    name: '',
    ...(options.region === undefined ? {} : { region: options.region }),
    partition: partitionOf(options.region ?? 'us-east-1'),
    ...(karpenterVersion ? { karpenterVersion } : {}),
  };
}

/** `--crd` for the plan builders, when given. */
function crdFilesOf(options: ScanCliOptions): { crdFiles?: readonly string[] } {
  const files = options.crdFiles ?? [];
  if (files.length === 0) return {};
  if (options.paths.length === 0) {
    // Live and recorded clusters bring their own installed CRDs.
    throw new ConfigError(
      '--crd gives the CRDs manifests are admitted by: give manifest paths too (live clusters are read with their installed CRDs, world files with the recorded ones)'
    );
  }
  return { crdFiles: files };
}

export async function buildPlan(options: ScanCliOptions): Promise<ScanPlan> {
  // A mistyped region would silently drop the checks of its partition (ISO, GovCloud): refuse it.
  const badRegion = options.region === undefined ? undefined : regionProblem(options.region);
  if (badRegion !== undefined) throw new ConfigError(`--region: ${badRegion}`);
  const mode = scanModeOf(options);
  const crdFiles = crdFilesOf(options);
  if (options.kubernetesVersion !== undefined && (mode !== 'live' || options.clusters.length > 0)) {
    // Elsewhere the version comes from the cluster (live or recorded): refuse rather than ignore.
    throw new ConfigError(
      '--kubernetes-version applies to manifests scanned with --aws or --profile only'
    );
  }
  const files = controllerPolicyFilesOf(options);
  if (mode === 'manifests') {
    if (options.paths.length === 0) {
      throw new ConfigError(
        `nothing to scan: give manifest paths, \`-\` for stdin, --world FILE or --cluster NAME${files === undefined ? '' : ' (--controller-policy takes every argument up to the next flag: give manifest paths before it)'}`
      );
    }
    if (files !== undefined) return buildManifestControllerPolicyPlan(options, files);
    if (options.dryRunRole !== undefined || (options.controllerRoles ?? []).length > 0) {
      throw new ConfigError(
        '--dry-run-role and --controller-role need permission checks: add --world FILE or --cluster NAME'
      );
    }
    return {
      environment: options.environment,
      objects: createManifestSource({
        paths: options.paths,
        cluster: manifestClusterContext(options),
        readStdin: options.readStdin,
        ...crdFiles,
      }),
    };
  }
  if (mode === 'world' && options.world !== undefined) {
    if (options.dryRunRole !== undefined) {
      throw new ConfigError(
        '--dry-run-role calls EC2 and needs a live scan (--aws, --profile or --cluster)'
      );
    }
    // Loaded only for --world: the world adapters carry the fact descriptors' SDK command classes,
    // which `--version`, `checks` and manifest scans never need.
    const { buildWorldPlan } = await import('./plan-world.js');
    const controllerPolicy =
      files === undefined
        ? undefined
        : await import('./plan-controller-policy.js').then(
            async ({ controllerPolicyPermissions, loadControllerPolicy }) => {
              const policy = await loadControllerPolicy(files);
              return (scps: Parameters<typeof controllerPolicyPermissions>[2]) =>
                controllerPolicyPermissions(policy, 'world', scps);
            }
          );
    return buildWorldPlan({
      ...(controllerPolicy === undefined ? {} : { controllerPolicy }),
      controllerRoles: parseControllerRoles(options.controllerRoles),
      world: options.world,
      paths: options.paths,
      ...crdFiles,
      clusters: options.clusters,
      ...(options.region === undefined ? {} : { region: options.region }),
      ...(options.karpenterVersion === undefined
        ? {}
        : { karpenterVersion: options.karpenterVersion }),
      environment: options.environment,
      readStdin: options.readStdin,
      now: options.now ?? new Date(),
    });
  }
  if (mode === 'live' && options.clusters.length > 0) return buildClusterPlan(options);
  if (mode === 'live') {
    if (
      options.dryRunRole !== undefined ||
      ((options.controllerRoles ?? []).length > 0 && files === undefined)
    ) {
      throw new ConfigError(
        '--dry-run-role and --controller-role need clusters: use --cluster NAME (or --world)'
      );
    }
    if (files !== undefined && options.paths.length === 0) {
      throw new ConfigError(
        'nothing to scan: give manifest paths with --aws/--profile, or --cluster NAME for live clusters (--controller-policy takes every argument up to the next flag: give manifest paths before it)'
      );
    }
    const controllerPolicy =
      files === undefined
        ? undefined
        : {
            ...controllerPolicyCluster(options, 'on manifests with --aws or --profile'),
            permissions: await import('./plan-controller-policy.js').then(
              async ({ controllerPolicyPermissions, loadControllerPolicy }) =>
                controllerPolicyPermissions(await loadControllerPolicy(files), 'live')
            ),
          };
    const { buildLiveManifestPlan } = await import('./plan-live-aws.js');
    return buildLiveManifestPlan({
      ...(controllerPolicy === undefined ? {} : { controllerPolicy }),
      paths: options.paths,
      ...crdFiles,
      ...(options.kubernetesVersion === undefined
        ? {}
        : { kubernetesVersion: options.kubernetesVersion }),
      ...(options.region === undefined ? {} : { region: options.region }),
      ...(options.profile === undefined ? {} : { profile: options.profile }),
      cluster: manifestClusterContext(options),
      environment: options.environment,
      readStdin: options.readStdin,
      now: options.now ?? new Date(),
    });
  }
  throw new ConfigError(`${mode} scans are not available in this build`);
}
