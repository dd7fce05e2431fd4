import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { IRole } from 'aws-cdk-lib/aws-iam';
import {
  Architecture,
  type FunctionOptions,
  type IDestination,
  Runtime,
} from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { HandlerName } from '../../lambda/shared/config.js';

/** The repository root: handler entries and the lock file are resolved from here. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Where the Lambda handlers live: `<dir>/<name>.ts`, each exporting `handler`. */
export const HANDLERS_DIRECTORY = join(REPO_ROOT, 'lambda/handlers');

export function handlerEntry(name: HandlerName, directory = HANDLERS_DIRECTORY): string {
  return join(directory, `${name}.ts`);
}

/** Latest Node.js LTS Lambda supports (cdk-nag AwsSolutions-L1; nodejs20.x is deprecated). */
export const SCANNER_RUNTIME = Runtime.NODEJS_24_X;

// ESM bundles cannot `require`; a few CJS dependencies still do. Powertools' example stack banner.
const CREATE_REQUIRE_BANNER =
  "import { createRequire as __scannerCreateRequire } from 'node:module';" +
  'const require = __scannerCreateRequire(import.meta.url);';

export interface ScannerFunctionProps {
  /** Path of the handler file (exports `handler`). */
  readonly entry: string;
  readonly description: string;
  /** The function's own execution role. */
  readonly role: IRole;
  readonly environment: Readonly<Record<string, string>>;
  readonly logRetention: RetentionDays;
  /** @default 512 MB */
  readonly memorySize?: number;
  /** @default 5 minutes */
  readonly timeout?: Duration;
  /** Bound on concurrent executions (EC2/IAM rate limits are shared with Karpenter). @default none */
  readonly reservedConcurrentExecutions?: number;
  /** Where failed asynchronous invocations go, after `retryAttempts`. @default none (SQS consumers) */
  readonly onFailure?: IDestination;
  /** Networking for clusters whose API endpoint is private. @default outside any VPC */
  readonly vpcProps?: Pick<FunctionOptions, 'vpc' | 'vpcSubnets' | 'securityGroups'>;
}

/**
 * A scanner Lambda with the house defaults fixed: latest Node LTS on arm64, explicit memory and
 * timeout, an explicit log group with retention, source maps shipped (not enabled), and an ESM bundle built by the local
 * esbuild (never Docker) that ships our own pinned, tree-shaken AWS SDK clients.
 */
export class ScannerFunction extends Construct {
  public readonly function: NodejsFunction;
  public readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ScannerFunctionProps) {
    super(scope, id);
    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.function = new NodejsFunction(this, 'Function', {
      entry: props.entry,
      handler: 'handler',
      description: props.description,
      runtime: SCANNER_RUNTIME,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.minutes(5),
      role: props.role,
      logGroup: this.logGroup,
      // No --enable-source-maps: parsing the map at start adds about a fifth to import time
      // (bench/cold-start.ts). The map ships in the asset.
      environment: { ...props.environment },
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      onFailure: props.onFailure,
      retryAttempts: props.onFailure === undefined ? undefined : 2,
      ...props.vpcProps,
      projectRoot: REPO_ROOT,
      depsLockFilePath: join(REPO_ROOT, 'package-lock.json'),
      bundling: {
        format: OutputFormat.ESM,
        mainFields: ['module', 'main'],
        minify: true,
        sourceMap: true,
        target: 'node24',
        bundleAwsSDK: true,
        externalModules: [],
        forceDockerBundling: false,
        banner: CREATE_REQUIRE_BANNER,
      },
    });
  }
}
