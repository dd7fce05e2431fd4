// EKS bearer tokens (https://github.com/kubernetes-sigs/aws-iam-authenticator#api-authorization-from-outside-a-cluster): a presigned STS GetCallerIdentity URL, as
// aws-iam-authenticator and `aws eks get-token` build it. Tokens are secrets: never log them.
import { Sha256 } from '@aws-crypto/sha256-js';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { partitionDnsSuffix, partitionOf } from '../../core/region.js';

const TOKEN_PREFIX = 'k8s-aws-v1.';
const CLUSTER_ID_HEADER = 'x-k8s-aws-id';
/** EKS rejects presigned URLs valid for more than 900 s; the signer's default is 3600. */
const PRESIGN_EXPIRES_SECONDS = 60;
/** STS honours the URL for 15 minutes after X-Amz-Date; reuse a token for at most 14. */
const TOKEN_REUSE_MS = 14 * 60 * 1000;

export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly expiration?: Date;
}

export type CredentialsProvider = () => Promise<AwsCredentials>;

export interface EksTokenProvider {
  /** A bearer token for `cluster`, reused until it is 14 minutes old. */
  token(cluster: string): Promise<string>;
}

export interface EksTokenOptions {
  readonly region: string;
  readonly credentials: CredentialsProvider;
  readonly now: () => Date;
}

/** The partition's regional STS host (`sts.cn-north-1.amazonaws.com.cn`, …). */
export function stsHostFor(region: string): string {
  return `sts.${region}.${partitionDnsSuffix(partitionOf(region))}`;
}

/** Builds one token, signed at `signingDate`. */
export async function presignEksToken(input: {
  readonly cluster: string;
  readonly region: string;
  readonly credentials: AwsCredentials;
  readonly signingDate: Date;
}): Promise<string> {
  const host = stsHostFor(input.region);
  const signer = new SignatureV4({
    service: 'sts',
    region: input.region,
    sha256: Sha256,
    credentials: input.credentials,
  });
  const request = new HttpRequest({
    method: 'GET',
    protocol: 'https:',
    hostname: host,
    path: '/',
    query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
    headers: { host, [CLUSTER_ID_HEADER]: input.cluster },
  });
  const presigned = await signer.presign(request, {
    expiresIn: PRESIGN_EXPIRES_SECONDS,
    signingDate: input.signingDate,
  });
  const query = Object.entries(presigned.query ?? {})
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`)
    .join('&');
  return TOKEN_PREFIX + Buffer.from(`https://${host}/?${query}`).toString('base64url');
}

export function createEksTokenProvider(options: EksTokenOptions): EksTokenProvider {
  const cache = new Map<string, { token: string; expiresAt: number }>();
  return {
    async token(cluster) {
      const now = options.now().getTime();
      const cached = cache.get(cluster);
      if (cached && now < cached.expiresAt) return cached.token;
      const credentials = await options.credentials();
      const token = await presignEksToken({
        cluster,
        region: options.region,
        credentials,
        signingDate: new Date(now),
      });
      // A token signed with temporary credentials dies with them.
      const expiresAt = Math.min(
        now + TOKEN_REUSE_MS,
        credentials.expiration?.getTime() ?? Number.POSITIVE_INFINITY
      );
      cache.set(cluster, { token, expiresAt });
      return token;
    },
  };
}
