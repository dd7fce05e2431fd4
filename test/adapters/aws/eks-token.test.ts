import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  type AwsCredentials,
  createEksTokenProvider,
  presignEksToken,
  stsHostFor,
} from '../../../lambda/adapters/aws/eks-token.js';

const credentials: AwsCredentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'session/token+with=reserved',
};
const signingDate = new Date('2026-11-01T12:34:56Z');

const ALLOWED_QUERY_KEYS = [
  'Action',
  'Version',
  'X-Amz-Algorithm',
  'X-Amz-Credential',
  'X-Amz-Date',
  'X-Amz-Expires',
  'X-Amz-Security-Token',
  'X-Amz-Signature',
  'X-Amz-SignedHeaders',
];

function decodeToken(token: string): URL {
  expect(token.startsWith('k8s-aws-v1.')).toBe(true);
  const payload = token.slice('k8s-aws-v1.'.length);
  expect(payload).toMatch(/^[A-Za-z0-9_-]+$/); // base64url, no padding
  return new URL(Buffer.from(payload, 'base64url').toString('utf8'));
}

// SigV4 written out from the AWS specification, independent of @smithy/signature-v4.
function rfc3986(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`
  );
}
const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const hmac = (key: Buffer | string, text: string) =>
  createHmac('sha256', key).update(text, 'utf8').digest();

function expectedSignature(url: URL, cluster: string, region: string): string {
  const params = [...url.searchParams.entries()].filter(([key]) => key !== 'X-Amz-Signature');
  const canonicalQuery = params
    .map(([key, value]) => [rfc3986(key), rfc3986(value)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
  const canonicalRequest = [
    'GET',
    '/',
    canonicalQuery,
    `host:${url.host}\nx-k8s-aws-id:${cluster}\n`,
    'host;x-k8s-aws-id',
    sha256Hex(''),
  ].join('\n');
  const amzDate = '20261101T123456Z';
  const scope = `20261101/${region}/sts/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const kDate = hmac(`AWS4${credentials.secretAccessKey}`, '20261101');
  const kSigning = hmac(hmac(hmac(kDate, region), 'sts'), 'aws4_request');
  return createHmac('sha256', kSigning).update(stringToSign, 'utf8').digest('hex');
}

describe('eks-token', () => {
  it('presigns GetCallerIdentity with only the query keys EKS accepts', async () => {
    // Act
    const url = decodeToken(
      await presignEksToken({ cluster: 'prod', region: 'eu-west-1', credentials, signingDate })
    );

    // Assess
    expect(url.protocol).toBe('https:');
    expect(url.host).toBe('sts.eu-west-1.amazonaws.com');
    expect(url.pathname).toBe('/');
    expect([...url.searchParams.keys()].sort()).toEqual([...ALLOWED_QUERY_KEYS].sort());
    expect(url.searchParams.get('Action')).toBe('GetCallerIdentity');
    expect(url.searchParams.get('Version')).toBe('2011-06-15');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('60');
    expect(url.searchParams.get('X-Amz-Date')).toBe('20261101T123456Z');
    expect(url.searchParams.get('X-Amz-SignedHeaders')?.split(';')).toContain('x-k8s-aws-id');
    expect(url.searchParams.get('X-Amz-Security-Token')).toBe(credentials.sessionToken);
  });

  it('signs the URL with a signature an independent SigV4 computation reproduces', async () => {
    // Prepare
    const cluster = 'prod-cluster';
    const region = 'eu-west-1';

    // Act
    const url = decodeToken(await presignEksToken({ cluster, region, credentials, signingDate }));

    // Assess
    expect(url.searchParams.get('X-Amz-Credential')).toBe(
      `AKIDEXAMPLE/20261101/${region}/sts/aws4_request`
    );
    expect(url.searchParams.get('X-Amz-Signature')).toBe(expectedSignature(url, cluster, region));
    expect(url.searchParams.get('X-Amz-Signature')).not.toBe(
      expectedSignature(url, 'another-cluster', region)
    );
  });

  it.each([
    ['us-east-1', 'sts.us-east-1.amazonaws.com'],
    ['cn-north-1', 'sts.cn-north-1.amazonaws.com.cn'],
    ['us-gov-west-1', 'sts.us-gov-west-1.amazonaws.com'],
    ['us-iso-east-1', 'sts.us-iso-east-1.c2s.ic.gov'],
    ['us-isob-east-1', 'sts.us-isob-east-1.sc2s.sgov.gov'],
  ])('uses the partition-correct regional STS host in %s', (region, host) => {
    expect(stsHostFor(region)).toBe(host);
  });

  it('reuses a token for 14 minutes, then signs a fresh one', async () => {
    // Prepare
    let now = signingDate;
    let credentialCalls = 0;
    const provider = createEksTokenProvider({
      region: 'us-east-1',
      credentials: async () => {
        credentialCalls += 1;
        return credentials;
      },
      now: () => now,
    });

    // Act
    const first = await provider.token('a');
    now = new Date(signingDate.getTime() + 13 * 60_000 + 59_000);
    const reused = await provider.token('a');
    const other = await provider.token('b');
    now = new Date(signingDate.getTime() + 14 * 60_000);
    const renewed = await provider.token('a');

    // Assess
    expect(reused).toBe(first);
    expect(other).not.toBe(first);
    expect(renewed).not.toBe(first);
    expect(decodeToken(renewed).searchParams.get('X-Amz-Date')).toBe('20261101T124856Z');
    expect(credentialCalls).toBe(3);
  });

  it('does not reuse a token past the expiry of the credentials that signed it', async () => {
    // Prepare
    let now = signingDate;
    const provider = createEksTokenProvider({
      region: 'us-east-1',
      credentials: async () => ({
        ...credentials,
        expiration: new Date(signingDate.getTime() + 5 * 60_000),
      }),
      now: () => now,
    });

    // Act
    const first = await provider.token('a');
    now = new Date(signingDate.getTime() + 5 * 60_000);
    const second = await provider.token('a');

    // Assess
    expect(second).not.toBe(first);
  });
});
