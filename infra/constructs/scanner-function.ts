import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { IRole } from 'aws-cdk-lib/aws-iam';
import {
  Architecture,
  Code,
  type FunctionOptions,
  type IDestination,
  Function as LambdaFunction,
  Runtime,
} from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { HANDLER_NAMES, type HandlerName } from '../../lambda/shared/config.js';

/** Latest Node.js LTS Lambda supports (cdk-nag AwsSolutions-L1; nodejs20.x is deprecated). */
export const SCANNER_RUNTIME = Runtime.NODEJS_24_X;

const PACKAGE_NAME = 'nodeclass-scanner';

/** The command that builds the bundles in a checkout of the repository. */
const BUILD_LAMBDAS_COMMAND = 'npm run build:lambdas';

/** Each bundle's entry file, exporting `handler` (Lambda handler `index.handler`). */
const BUNDLE_ENTRY_FILE = 'index.mjs';

/**
 * The root of the nodeclass-scanner package this module was loaded from: the nearest directory
 * above it whose package.json is ours. The same walk finds it from the sources
 * (infra/constructs/) and from the bundled package (dist/cdk/), installed or not.
 */
export function packageRoot(moduleUrl: string = import.meta.url): string {
  const start = dirname(fileURLToPath(moduleUrl));
  for (let directory = start; ; directory = dirname(directory)) {
    if (packageNameAt(directory) === PACKAGE_NAME) return directory;
    if (dirname(directory) === directory) {
      throw new Error(
        `NodeClassScanner: no package.json named ${PACKAGE_NAME} above ${start}; ` +
          'set lambdaBundlesDirectory to the directory of the prebuilt Lambda bundles'
      );
    }
  }
}

function packageNameAt(directory: string): string | undefined {
  const file = join(directory, 'package.json');
  if (!existsSync(file)) return undefined;
  try {
    const name: unknown = JSON.parse(readFileSync(file, 'utf8')).name;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

/** Where the package keeps its prebuilt Lambda bundles: `<package root>/dist/lambda`. */
export function defaultLambdaBundlesDirectory(moduleUrl?: string): string {
  return join(packageRoot(moduleUrl), 'dist', 'lambda');
}

/** Context key naming the bundles directory when the construct's prop is not set. */
export const LAMBDA_BUNDLES_CONTEXT_KEY = 'nodeclass-scanner:lambdaBundlesDirectory';

/** The bundles directory: the prop, else the context key, else the package's own bundles. */
export function lambdaBundlesDirectoryOf(scope: Construct, directory?: string): string {
  if (directory !== undefined) return directory;
  const fromContext: unknown = scope.node.tryGetContext(LAMBDA_BUNDLES_CONTEXT_KEY);
  if (fromContext === undefined) return defaultLambdaBundlesDirectory();
  if (typeof fromContext !== 'string' || fromContext.trim() === '') {
    throw new Error(
      `NodeClassScanner: context ${LAMBDA_BUNDLES_CONTEXT_KEY} must be a directory path, got ${JSON.stringify(fromContext)}`
    );
  }
  return resolve(fromContext);
}

/**
 * Each handler's bundle directory under `bundlesDirectory` (`<handler>/index.mjs`). Throws at
 * synth, naming the directory and how to build it, when any is missing: `Code.fromAsset` would
 * otherwise fail on the first one with a bare path.
 */
export function lambdaBundleDirectories(
  bundlesDirectory: string = defaultLambdaBundlesDirectory()
): Record<HandlerName, string> {
  const directories = Object.fromEntries(
    HANDLER_NAMES.map((handler) => [handler, join(bundlesDirectory, handler)])
  ) as Record<HandlerName, string>;
  const missing = HANDLER_NAMES.filter(
    (handler) => !existsSync(join(directories[handler], BUNDLE_ENTRY_FILE))
  );
  if (missing.length > 0) {
    throw new Error(
      `NodeClassScanner: the prebuilt Lambda bundles are missing from ${bundlesDirectory} ` +
        `(no ${missing.map((handler) => `${handler}/${BUNDLE_ENTRY_FILE}`).join(', ')}). ` +
        `In a checkout of the ${PACKAGE_NAME} repository, build them with \`${BUILD_LAMBDAS_COMMAND}\`; ` +
        'the published package ships them. Or set lambdaBundlesDirectory to a directory holding ' +
        `<handler>/${BUNDLE_ENTRY_FILE} for ${HANDLER_NAMES.join(', ')}.`
    );
  }
  return directories;
}

export interface ScannerFunctionProps {
  /** Directory of the handler's prebuilt bundle: `index.mjs` exporting `handler`. */
  readonly bundleDirectory: string;
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
  readonly reservedConcurrentExecutions?: number | undefined;
  /** Where failed asynchronous invocations go, after `retryAttempts`. @default none (SQS consumers) */
  readonly onFailure?: IDestination;
  /** Networking for clusters whose API endpoint is private. @default outside any VPC */
  readonly vpcProps?: Pick<FunctionOptions, 'vpc' | 'vpcSubnets' | 'securityGroups'> | undefined;
}

/**
 * A scanner Lambda with the house defaults fixed: latest Node LTS on arm64, explicit memory and
 * timeout, an explicit log group with retention, and a prebuilt ESM bundle deployed as is (built
 * ahead of synth by scripts/build-lambdas.ts, so synth needs neither esbuild nor TypeScript). The
 * bundle carries our own pinned AWS SDK clients and a source map.
 */
export class ScannerFunction extends Construct {
  public readonly function: LambdaFunction;
  public readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ScannerFunctionProps) {
    super(scope, id);
    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // The construct id 'Function' keeps the logical ids the esbuild-at-synth version had.
    this.function = new LambdaFunction(this, 'Function', {
      code: Code.fromAsset(props.bundleDirectory),
      handler: 'index.handler',
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
      ...(props.reservedConcurrentExecutions === undefined
        ? {}
        : { reservedConcurrentExecutions: props.reservedConcurrentExecutions }),
      ...(props.onFailure === undefined ? {} : { onFailure: props.onFailure, retryAttempts: 2 }),
      ...props.vpcProps,
    });
  }
}
