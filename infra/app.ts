// The ready-made app: `npx cdk deploy --all` with settings from cdk.json context (see README,
// "Configuration"). cdk-nag's AwsSolutions pack runs on every synth and fails it on violations.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, Fn, Validations } from 'aws-cdk-lib';
import { Subnet, Vpc } from 'aws-cdk-lib/aws-ec2';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { Construct } from 'constructs';
import {
  amiForwardingStackName,
  DEFAULT_STACK_NAME,
  FORWARDING_STACK_SUFFIX,
  parseScannerConfig,
  type ScannerConfig,
} from './config.js';
import { propsOfSettings } from './constructs/setting-props.js';
import { IAM_EVENTS_REGION } from './event-patterns.js';
// The package's CDK entry, used exactly as a consumer's app would.
import {
  AmiEventForwardingStack,
  amiEventForwardingRegions,
  IamEventForwardingStack,
  type NodeClassScannerProps,
  ScannerStack,
} from './index.js';

/** The stacks' names when `stackName` is not set. */
export const SCANNER_STACK_NAME = DEFAULT_STACK_NAME;
export const FORWARDING_STACK_NAME = `${DEFAULT_STACK_NAME}${FORWARDING_STACK_SUFFIX}`;

export interface ScannerApp {
  readonly config: ScannerConfig;
  readonly scanner: ScannerStack;
  /** Absent when the home region is us-east-1 or IAM events are off. */
  readonly forwarder?: IamEventForwardingStack | undefined;
  /**
   * One per region other than home the scanner scans (`name@region` clusters, discovery regions),
   * by region; empty when it scans its home region only or AMI events are off.
   */
  readonly amiForwarders: ReadonlyMap<string, AmiEventForwardingStack>;
}

/** Reads the context of `app` (all of it: an unknown key is an error), then adds the stacks. */
export function buildScannerApp(app: App, options: { readonly nag?: boolean } = {}): ScannerApp {
  const config = parseScannerConfig(app.node.getAllContext());
  const scanner = new ScannerStack(app, config.stackName, {
    env: { region: config.homeRegion },
    description: 'nodeclass-scanner: audits Karpenter EC2NodeClasses and alerts on breakage',
    scanner: (scope) => scannerProps(scope, config),
  });
  const forwarder =
    config.iamEvents && config.homeRegion !== IAM_EVENTS_REGION
      ? new IamEventForwardingStack(app, `${config.stackName}${FORWARDING_STACK_SUFFIX}`, {
          env: { region: IAM_EVENTS_REGION },
          description: `nodeclass-scanner: forwards IAM change events to ${config.homeRegion}`,
          homeRegion: config.homeRegion,
        })
      : undefined;
  const amiForwarders = new Map(
    (config.amiEvents ? amiEventForwardingRegions(config) : []).map((region) => [
      region,
      new AmiEventForwardingStack(app, amiForwardingStackName(config.stackName, region), {
        env: { region },
        description: `nodeclass-scanner: forwards ${region} AMI state changes to ${config.homeRegion}`,
        homeRegion: config.homeRegion,
      }),
    ])
  );
  if (options.nag ?? true) Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { config, scanner, forwarder, amiForwarders };
}

/** Context → construct props (the VPC is imported, never looked up: synth needs no credentials). */
function scannerProps(scope: Construct, config: ScannerConfig): NodeClassScannerProps {
  const vpc =
    config.vpcId === undefined
      ? undefined
      : // Subnets are given explicitly, so the AZ list only has to be non-empty (no lookup).
        Vpc.fromVpcAttributes(scope, 'ClusterVpc', {
          vpcId: config.vpcId,
          availabilityZones: Fn.getAzs(),
        });
  return {
    // The table's settings (durations in its units), then what the app assembles itself.
    ...(propsOfSettings(config) as Partial<NodeClassScannerProps>),
    clusters: config.clusters,
    slack:
      config.slackWorkspaceId !== undefined && config.slackChannelId !== undefined
        ? { workspaceId: config.slackWorkspaceId, channelId: config.slackChannelId }
        : undefined,
    clusterSettings: config.clusterSettings,
    // Stack names cannot hold `_`, so distinct stack names give distinct namespaces.
    metricsNamespace: config.stackName.replaceAll('-', '_'),
    ignore: config.ignore,
    annotationSuppression: config.annotationSuppression,
    vpc,
    vpcSubnets:
      vpc === undefined
        ? undefined
        : {
            subnets: config.subnetIds.map((subnetId) =>
              Subnet.fromSubnetId(scope, `Subnet-${subnetId}`, subnetId)
            ),
          },
  };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  buildScannerApp(new App());
}
