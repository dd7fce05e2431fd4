import { describe, expect, it } from 'vitest';
import { parsePolicyDocument, trustsService } from '../../lambda/core/iam-policy.js';

const EC2 = ['ec2.amazonaws.com'];

function trust(document: unknown) {
  const parsed = parsePolicyDocument(JSON.stringify(document));
  if (!parsed.ok) throw new Error(parsed.error);
  return trustsService(parsed.document, EC2);
}

describe('trust policies', () => {
  it('trusts an Allow for the service with sts:AssumeRole, single statement and string forms', () => {
    expect(
      trust({
        Statement: {
          Effect: 'Allow',
          Principal: { Service: 'ec2.amazonaws.com' },
          Action: 'sts:AssumeRole',
        },
      }).trusted
    ).toBe(true);
    expect(
      trust({
        Statement: [
          { Effect: 'Allow', Principal: { Service: ['ec2.amazonaws.com'] }, Action: ['sts:*'] },
        ],
      }).trusted
    ).toBe(true);
  });

  it('does not trust when a Deny for the service applies', () => {
    expect(
      trust({
        Statement: [
          {
            Effect: 'Allow',
            Principal: { Service: 'ec2.amazonaws.com' },
            Action: 'sts:AssumeRole',
          },
          { Effect: 'Deny', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' },
        ],
      }).trusted
    ).toBe(false);
  });

  it('does not trust for another action or principal', () => {
    expect(
      trust({
        Statement: [
          {
            Effect: 'Allow',
            Principal: { Service: 'ec2.amazonaws.com' },
            Action: 'sts:TagSession',
          },
        ],
      }).trusted
    ).toBe(false);
    expect(
      trust({
        Statement: [
          { Effect: 'Allow', Principal: { AWS: 'arn:aws:iam::1:root' }, Action: 'sts:AssumeRole' },
        ],
      }).trusted
    ).toBe(false);
  });

  it('reports conditions it does not evaluate', () => {
    const result = trust({
      Statement: [
        {
          Effect: 'Allow',
          Principal: { Service: 'ec2.amazonaws.com' },
          Action: 'sts:AssumeRole',
          Condition: { StringEquals: { 'aws:SourceAccount': '111122223333' } },
        },
      ],
    });
    expect(result).toEqual({ trusted: true, conditional: true });
  });

  it('parses URL-encoded documents and rejects garbage with a reason', () => {
    const text = encodeURIComponent(JSON.stringify({ Statement: [] }));
    expect(parsePolicyDocument(text).ok).toBe(true);
    const bad = parsePolicyDocument('{"Statement": 3}');
    expect(bad.ok).toBe(false);
    expect(parsePolicyDocument('not json').ok).toBe(false);
  });
});
