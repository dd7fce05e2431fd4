import { describe, expect, it } from 'vitest';
import { evaluateKeyPolicy, type KmsPolicyRequest } from '../../../lambda/core/kms/key-policy.js';
import { launchKmsContext } from '../../../lambda/core/kms/launch-access.js';

const ACCOUNT = '111122223333';
const ROLE = `arn:aws:iam::${ACCOUNT}:role/Karpenter`;
const SCOPE = { region: 'us-east-1', accountId: ACCOUNT, partition: 'aws' } as const;

function request(action = 'kms:Decrypt'): KmsPolicyRequest {
  return {
    principalArn: ROLE,
    ...SCOPE,
    keyArn: `arn:aws:kms:us-east-1:${ACCOUNT}:key/k-1`,
    action,
    context: launchKmsContext(SCOPE, action),
  };
}

const policy = (...statements: object[]) => JSON.stringify({ Statement: statements });
const allow = (principal: unknown, extra: object = {}) => ({
  Effect: 'Allow',
  Principal: principal,
  Action: 'kms:*',
  Resource: '*',
  ...extra,
});

describe('evaluateKeyPolicy', () => {
  it.each([
    ['the role by ARN', allow({ AWS: ROLE }), 'allows-principal'],
    [
      'anyone, via EC2 of the region',
      allow('*', {
        Condition: { StringEquals: { 'kms:ViaService': 'ec2.us-east-1.amazonaws.com' } },
      }),
      'allows-principal',
    ],
    [
      'anyone, via EC2 of another region',
      allow('*', {
        Condition: { StringEquals: { 'kms:ViaService': 'ec2.eu-west-1.amazonaws.com' } },
      }),
      'not-granted',
    ],
    ['the account root', allow({ AWS: `arn:aws:iam::${ACCOUNT}:root` }), 'delegates-to-iam'],
    ['the bare account id', allow({ AWS: ACCOUNT }), 'delegates-to-iam'],
    ['another account', allow({ AWS: 'arn:aws:iam::444455556666:root' }), 'not-granted'],
    ['a service principal', allow({ Service: 'ec2.amazonaws.com' }), 'not-granted'],
    [
      'a NotPrincipal',
      { Effect: 'Allow', NotPrincipal: { AWS: ROLE }, Action: 'kms:*', Resource: '*' },
      'unknown',
    ],
    [
      'a key it cannot know',
      allow({ AWS: ROLE }, { Condition: { StringEquals: { 'aws:SourceVpc': 'vpc-1' } } }),
      'unknown',
    ],
    [
      'an …IfExists test on a key it cannot know',
      allow({ AWS: ROLE }, { Condition: { StringEqualsIfExists: { 'aws:SourceVpc': 'vpc-1' } } }),
      'allows-principal',
    ],
    [
      'a negated test that holds',
      allow(
        { AWS: ROLE },
        { Condition: { StringNotEquals: { 'kms:CallerAccount': '444455556666' } } }
      ),
      'allows-principal',
    ],
  ])('a statement for %s', (_case, statement, outcome) => {
    expect(evaluateKeyPolicy(policy(statement), request())?.outcome).toBe(outcome);
  });

  it('lets a Deny for the account win over an Allow for the role, naming it', () => {
    const verdict = evaluateKeyPolicy(
      policy(allow({ AWS: ROLE }), {
        Sid: 'NoUse',
        Effect: 'Deny',
        Principal: { AWS: `arn:aws:iam::${ACCOUNT}:root` },
        Action: ['kms:Decrypt'],
        Resource: '*',
      }),
      request()
    );
    expect(verdict).toEqual({ outcome: 'denied', statement: 'NoUse', open: [] });
  });

  it('evaluates kms:GrantIsForAWSResource on CreateGrant only', () => {
    const onlyForAws = policy(
      allow(
        { AWS: ROLE },
        {
          Action: 'kms:CreateGrant',
          Condition: { Bool: { 'kms:GrantIsForAWSResource': 'true' } },
        }
      )
    );
    expect(evaluateKeyPolicy(onlyForAws, request('kms:CreateGrant'))?.outcome).toBe(
      'allows-principal'
    );
    expect(evaluateKeyPolicy(onlyForAws, request('kms:Decrypt'))?.outcome).toBe('not-granted');
  });

  it('matches action wildcards without regard to case', () => {
    const reEncrypt = policy(allow({ AWS: ROLE }, { Action: 'KMS:ReEncrypt*' }));
    expect(evaluateKeyPolicy(reEncrypt, request('kms:ReEncryptFrom'))?.outcome).toBe(
      'allows-principal'
    );
  });

  it('answers undefined for a document that is not a policy', () => {
    expect(evaluateKeyPolicy('not json', request())).toBeUndefined();
    expect(evaluateKeyPolicy('[]', request())).toBeUndefined();
  });
});
