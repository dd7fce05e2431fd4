// `scan --aws|--profile P [--region R] [--kubernetes-version V] paths…`: manifests evaluated against
// live AWS facts. No cluster is read, so alias terms resolve for `--kubernetes-version`; without
// it they report the missing version as an error finding.

import { createLiveAwsFacts } from '../adapters/aws/aws-facts-adapter.js';
import { awsTimeoutsFromEnv } from '../adapters/aws/client-defaults.js';
import { type AwsClients, createAwsClients } from '../adapters/aws/clients.js';
import { createIamRolePolicyReader, withAccountRoles } from '../adapters/aws/iam-simulator.js';
import { rateLimited } from '../adapters/aws/rate-limit.js';
import { createManifestSource } from '../adapters/files/manifest-source.js';
import { createAwsFactsEnricher } from '../app/collect-aws-facts.js';
import {
  createPermissionsEnricher,
  type PermissionsEnricherOptions,
} from '../app/collect-permissions.js';
import type { ScanPlan } from '../app/run-scan.js';
import { ok } from '../core/facts/slice.js';
import type { ClusterContext } from '../core/inventory.js';
import { partitionOf } from '../core/region.js';
import { ConfigError } from '../shared/errors.js';
import { resolveRegion, verifyAwsAccess } from './aws-preflight.js';

export interface LiveManifestPlanOptions {
  readonly paths: readonly string[];
  /** `--crd FILE…`: Karpenter's CRDs the manifests are admitted by. */
  readonly crdFiles?: readonly string[];
  readonly region?: string;
  readonly profile?: string;
  /** Context from the flags (`--karpenter-version`); its region is replaced by the resolved one. */
  readonly cluster: ClusterContext;
  readonly kubernetesVersion?: string;
  readonly environment: 'production' | 'non-production';
  readonly readStdin: () => Promise<string>;
  readonly now: Date;
  /** Injected clients (tests); created from region/profile otherwise. */
  readonly clients?: AwsClients;
  /**
   * `--controller-policy` with `--controller-role CLUSTER=ARN`: the manifests are that cluster's,
   * and its controller checks simulate the documents (the class' resources resolved live).
   */
  readonly controllerPolicy?: {
    readonly cluster: string;
    readonly controllerRole: string;
    readonly permissions: Pick<
      PermissionsEnricherOptions,
      'simulator' | 'policies' | 'policySource'
    >;
  };
}

export async function buildLiveManifestPlan(options: LiveManifestPlanOptions): Promise<ScanPlan> {
  if (options.paths.length === 0) {
    throw new ConfigError(
      'nothing to scan: give manifest paths with --aws/--profile, or --cluster NAME for live clusters'
    );
  }
  const clients =
    options.clients ??
    createAwsClients({
      ...(options.region === undefined ? {} : { region: options.region }),
      ...(options.profile === undefined ? {} : { profile: options.profile }),
      timeouts: awsTimeoutsFromEnv(process.env),
    });
  const { kubernetesVersion } = options;
  if (kubernetesVersion !== undefined && !/^\d+\.\d+$/.test(kubernetesVersion)) {
    throw new ConfigError(
      `--kubernetes-version "${kubernetesVersion}" is not a version such as 1.33`
    );
  }
  const region = await resolveRegion(clients, options.region);
  const { controllerPolicy } = options;
  if (
    controllerPolicy !== undefined &&
    controllerPolicy.controllerRole.split(':')[1] !== partitionOf(region)
  ) {
    throw new ConfigError(
      `--controller-role ${controllerPolicy.controllerRole} is not in partition ${partitionOf(region)} of region ${region}`
    );
  }
  await verifyAwsAccess(clients.sts(region), region);
  return {
    environment: options.environment,
    objects: createManifestSource({
      paths: options.paths,
      cluster: {
        ...options.cluster,
        ...(controllerPolicy === undefined ? {} : { name: controllerPolicy.cluster }),
        region,
        partition: partitionOf(region),
        ...(kubernetesVersion === undefined ? {} : { aws: ok({ kubernetesVersion }) }),
      },
      readStdin: options.readStdin,
      ...(options.crdFiles === undefined ? {} : { crdFiles: options.crdFiles }),
    }),
    enrichers: [
      createAwsFactsEnricher({
        port: createLiveAwsFacts(
          {
            ec2: clients.ec2(region),
            ssm: clients.ssm(region),
            iam: clients.iam(region),
            kms: clients.kms(region),
          },
          { limiter: clients.limiter }
        ),
        now: options.now,
      }),
      // After the AWS facts: the simulations use the resolved images, subnets and node roles.
      ...(controllerPolicy === undefined
        ? []
        : [
            createPermissionsEnricher({
              // Whether the Spot service-linked role exists is the account's: read from IAM.
              ...withAccountRoles(
                controllerPolicy.permissions,
                createIamRolePolicyReader(rateLimited(clients.iam(region), 'iam', clients.limiter))
              ),
              controllerRoles: { [controllerPolicy.cluster]: controllerPolicy.controllerRole },
            }),
          ]),
    ],
  };
}
