import { describe, expect, it } from 'vitest';
import type { Check } from '../../lambda/core/check.js';
import { runChecks } from '../../lambda/core/evaluate.js';
import {
  REDACTED,
  redactDeep,
  redactEvaluation,
  redactFinding,
  redactSecrets,
} from '../../lambda/core/redact.js';
import { anInventory } from '../support/builders.js';
import { aFinding } from '../support/findings.js';

/** An EKS token shaped like `aws eks get-token`'s: base64url of a presigned STS URL. */
function eksToken(signature = 'a'.repeat(64)): string {
  const url =
    'https://sts.eu-west-1.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15' +
    '&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20261101%2Feu-west-1%2Fsts%2Faws4_request' +
    `&X-Amz-Date=20261101T120000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host%3Bx-k8s-aws-id&X-Amz-Signature=${signature}`;
  return `k8s-aws-v1.${Buffer.from(url).toString('base64url')}`;
}

const SECRET_KEY = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const SESSION_TOKENS = [
  `IQoJb3JpZ2luX2VjEHoaCWV1LXdlc3QtMSJHMEUCIQD${'x9Y+/'.repeat(40)}==`,
  `FwoGZXIvYXdzEBYaDHhZ${'Qk3v'.repeat(60)}`,
];

describe('redactSecrets', () => {
  it('replaces an EKS token wherever it appears, with or without Bearer', () => {
    const token = eksToken();
    expect(redactSecrets(`Authorization: Bearer ${token}`)).toBe(
      `Authorization: Bearer ${REDACTED}`
    );
    expect(redactSecrets(`{"message":"bad token ${token}."}`)).toBe(
      `{"message":"bad token ${REDACTED}."}`
    );
    // A truncated excerpt still carries part of the token.
    expect(redactSecrets(`denied: ${token.slice(0, 40)}…`)).toBe(`denied: ${REDACTED}…`);
  });

  it('replaces any long bearer token, whatever its format', () => {
    expect(redactSecrets('got "Bearer eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.x.y" from you')).toBe(
      `got "Bearer ${REDACTED}" from you`
    );
  });

  it.each([
    [`aws_secret_access_key = ${SECRET_KEY}`, `aws_secret_access_key = ${REDACTED}`],
    [`AWS_SECRET_ACCESS_KEY=${SECRET_KEY}`, `AWS_SECRET_ACCESS_KEY=${REDACTED}`],
    [`{"SecretAccessKey": "${SECRET_KEY}"}`, `{"SecretAccessKey": "${REDACTED}"}`],
    [`clientSecret: ${SECRET_KEY}`, `clientSecret: ${REDACTED}`],
    // The credential names are secret whatever the value's shape.
    ['aws_secret_access_key=short', `aws_secret_access_key=${REDACTED}`],
    ['aws_session_token=abc', `aws_session_token=${REDACTED}`],
  ])('redacts a secret key after its name: %s', (text, expected) => {
    expect(redactSecrets(text)).toBe(expected);
  });

  it.each(SESSION_TOKENS)('redacts an STS session token %#, bare or URL-encoded', (token) => {
    expect(redactSecrets(`token ${token} end`)).toBe(`token ${REDACTED} end`);
    expect(redactSecrets(`x=${encodeURIComponent(token)}&y=1`)).toBe(`x=${REDACTED}&y=1`);
  });

  it('redacts the signature and session token of a presigned URL', () => {
    const url = `https://sts.amazonaws.com/?X-Amz-Security-Token=abc%2Fdef&X-Amz-Signature=${'f'.repeat(64)}&X-Amz-Date=20261101T120000Z`;
    expect(redactSecrets(url)).toBe(
      `https://sts.amazonaws.com/?X-Amz-Security-Token=${REDACTED}&X-Amz-Signature=${REDACTED}&X-Amz-Date=20261101T120000Z`
    );
  });

  it.each([
    'ami-0123456789abcdef0 (al2023@v20261101)',
    'arn:aws:iam::123456789012:role/KarpenterNodeRole-prod',
    'arn:aws:ssm:eu-west-1::parameter/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id',
    `commitKey: ${'0123456789abcdef'.repeat(2)}01234567`,
    `imageDigest: sha256:${'ab12'.repeat(16)}`,
    'kmsKeyId: 1234abcd-12ab-34cd-56ef-1234567890ab',
    'accessKeyId: AKIAIOSFODNN7EXAMPLE',
    'subnet-0a1b2c3d4e5f60718, sg-0123456789abcdef0, lt-0123456789abcdef0',
    `secretName: ${'a'.repeat(39)}`,
    'Bearer tokens expire after 15 minutes.',
    'karpenter.sh/discovery=prod, kubernetes.io/cluster/prod=owned',
    `IQoJb3JpZ2lu (too short to be a token)`,
  ])('leaves ordinary text alone: %s', (text) => {
    expect(redactSecrets(text)).toBe(text);
  });

  it('stays fast on adversarial input', { timeout: 10_000 }, () => {
    const inputs = [
      'a-'.repeat(500_000),
      `${'secret'.repeat(100_000)}:`,
      'Bearer '.repeat(100_000),
      `${'IQoJb3JpZ2lu'.repeat(50_000)}!`,
      `${' '.repeat(500_000)}=`,
      `${'k8s-aws-v1.'.repeat(50_000)}`,
    ];
    for (const input of inputs) expect(typeof redactSecrets(input)).toBe('string');
    expect(redactSecrets('k8s-aws-v1.'.repeat(3))).not.toContain('k8s-aws-v1.');
  });
});

describe('redactDeep', () => {
  it('redacts strings, keys and secret-named fields through nested objects and arrays', () => {
    const token = eksToken();
    const evidence = {
      detail: `401: Bearer ${token}`,
      nested: [{ echoed: { authorization: token } }, 'plain'],
      credentials: { SecretAccessKey: SECRET_KEY, SessionToken: 'opaque', AccessKeyId: 'AKIA1' },
      [`header-${token}`]: 1,
      count: 3,
      flag: true,
      none: null,
    };

    const clean = redactDeep(evidence);

    expect(JSON.stringify(clean)).not.toMatch(/k8s-aws-v1\.|wJalrXUtnFEMI|opaque/);
    expect(clean).toEqual({
      detail: `401: Bearer ${REDACTED}`,
      nested: [{ echoed: { authorization: REDACTED } }, 'plain'],
      credentials: { SecretAccessKey: REDACTED, SessionToken: REDACTED, AccessKeyId: 'AKIA1' },
      [`header-${REDACTED}`]: 1,
      count: 3,
      flag: true,
      none: null,
    });
  });

  it('returns the same reference when there is nothing to redact', () => {
    const evidence = { images: [{ id: 'ami-0123456789abcdef0' }], subnets: ['subnet-1'] };
    expect(redactDeep(evidence)).toBe(evidence);
  });

  it('keeps a __proto__ key as data', () => {
    const evidence = JSON.parse(`{"__proto__": {"x": "${eksToken()}"}}`) as object;
    const clean = redactDeep(evidence) as Record<string, unknown>;
    expect(Object.hasOwn(clean, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(clean)).toBe(Object.prototype);
    expect(JSON.stringify(clean)).toBe(`{"__proto__":{"x":"${REDACTED}"}}`);
  });

  it('cuts off values nested deeper than any evidence (or cyclic)', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(JSON.stringify(redactDeep({ cyclic }))).toContain(REDACTED);
  });
});

describe('redactFinding / redactEvaluation', () => {
  it('scrubs message, remediation and evidence, and leaves a clean finding as is', () => {
    const token = eksToken();
    const dirty = aFinding({
      message: `HTTP 401: ${token}`,
      remediation: `export AWS_SECRET_ACCESS_KEY=${SECRET_KEY}`,
      evidence: { detail: token },
    });
    const clean = redactFinding(dirty);
    expect(clean).toMatchObject({
      message: `HTTP 401: ${REDACTED}`,
      remediation: `export AWS_SECRET_ACCESS_KEY=${REDACTED}`,
      evidence: { detail: REDACTED },
    });
    const untouched = aFinding();
    expect(redactFinding(untouched)).toBe(untouched);
  });

  it('gives material evidence its hash after redaction, so a new token is no change', () => {
    const echoing = (token: string): Check => ({
      id: 'echo',
      title: 'echo',
      group: 'cluster',
      severity: 'high',
      inputs: ['spec'],
      rationale: 'none',
      remediation: 'none',
      references: [],
      material: ['detail'],
      evaluate: () => [
        {
          status: 'error',
          resource: { cluster: 'prod', kind: 'Cluster', name: 'prod' },
          message: `server said ${token}`,
          evidence: { detail: `Bearer ${token}` },
        },
      ],
    });
    const scan = (token: string) => {
      const check = echoing(token);
      return redactEvaluation(runChecks(anInventory([]), [check], { now: new Date(0) }), [check]);
    };

    const first = scan(eksToken('1'.repeat(64))).findings[0];
    const second = scan(eksToken('2'.repeat(64))).findings[0];

    expect(first?.message).toBe(`server said ${REDACTED}`);
    expect(first?.evidence).toEqual({ detail: `Bearer ${REDACTED}` });
    expect(first?.materialHash).toBe(second?.materialHash);
  });
});
