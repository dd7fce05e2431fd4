// One SDK client per service per region, created on first use (never at import time), each with
// the SDK's standard retries (the only retry layer), connection and request timeouts, the scan
// deadline, the API-call counter and the client-side rate limiter attached.
import { EC2Client, type EC2ClientConfig } from '@aws-sdk/client-ec2';
import { EKSClient } from '@aws-sdk/client-eks';
import { IAMClient } from '@aws-sdk/client-iam';
import { KMSClient } from '@aws-sdk/client-kms';
import { SSMClient } from '@aws-sdk/client-ssm';
import { STSClient } from '@aws-sdk/client-sts';
import { fromIni } from '@aws-sdk/credential-providers';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import { ApiCallCounter } from './api-call-counter.js';
import {
  type AwsTimeouts,
  DEFAULT_MAX_ATTEMPTS,
  instrumentClient,
  requestHandlerOptions,
  scanDeadlinePlugin,
} from './client-defaults.js';
import { type ApiRateLimiter, realTimeRateLimiter } from './rate-limit.js';

export { DEFAULT_MAX_ATTEMPTS };

export interface AwsClientOptions {
  /** Default region; clients for other regions are created on request. */
  readonly region?: string;
  /** Named profile from the shared config/credentials files; default chain otherwise. */
  readonly profile?: string;
  readonly maxAttempts?: number;
  readonly counter?: ApiCallCounter;
  readonly limiter?: ApiRateLimiter;
  /** HTTP handler override (proxies, tests); the SDK's node handler with `timeouts` otherwise. */
  readonly requestHandler?: EC2ClientConfig['requestHandler'];
  /** The defaults (client-defaults.ts) otherwise. */
  readonly timeouts?: AwsTimeouts;
}

interface ClientConfig {
  region?: string;
  maxAttempts: number;
  retryMode: 'standard';
  credentials?: AwsCredentialIdentityProvider;
  /** Also makes the region come from the profile when not given. */
  profile?: string;
  requestHandler?: Exclude<EC2ClientConfig['requestHandler'], undefined>;
}

export interface AwsClients {
  readonly counter: ApiCallCounter;
  /** Client-side rate limits shared by every scan using these clients (see rate-limit.ts). */
  readonly limiter: ApiRateLimiter;
  /** The default region, when known (explicit or from the SDK's default chain). */
  readonly region: string | undefined;
  ec2(region?: string): EC2Client;
  iam(region?: string): IAMClient;
  ssm(region?: string): SSMClient;
  kms(region?: string): KMSClient;
  eks(region?: string): EKSClient;
  sts(region?: string): STSClient;
}

type ClientCtor<T> = new (config: ClientConfig) => T;

export function createAwsClients(options: AwsClientOptions = {}): AwsClients {
  const counter = options.counter ?? new ApiCallCounter();
  const credentials =
    options.profile === undefined ? undefined : fromIni({ profile: options.profile });
  const cache = new Map<string, unknown>();
  const limiter = options.limiter ?? realTimeRateLimiter();

  function client<T extends EC2Client | IAMClient | SSMClient | KMSClient | EKSClient | STSClient>(
    service: string,
    Ctor: ClientCtor<T>,
    region: string | undefined
  ): T {
    const effectiveRegion = region ?? options.region;
    const key = `${service}@${effectiveRegion ?? ''}`;
    const cached = cache.get(key);
    if (cached) return cached as T;
    const created = new Ctor({
      ...(effectiveRegion === undefined ? {} : { region: effectiveRegion }),
      maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      retryMode: 'standard',
      ...(credentials ? { credentials } : {}),
      ...(options.profile === undefined ? {} : { profile: options.profile }),
      requestHandler: options.requestHandler ?? requestHandlerOptions(options.timeouts),
    });
    instrumentClient(created as EC2Client, service, counter, limiter);
    (created as EC2Client).middlewareStack.use(scanDeadlinePlugin(service));
    cache.set(key, created);
    return created;
  }

  return {
    counter,
    limiter,
    region: options.region,
    ec2: (region) => client('ec2', EC2Client, region),
    iam: (region) => client('iam', IAMClient, region),
    ssm: (region) => client('ssm', SSMClient, region),
    kms: (region) => client('kms', KMSClient, region),
    eks: (region) => client('eks', EKSClient, region),
    sts: (region) => client('sts', STSClient, region),
  };
}
