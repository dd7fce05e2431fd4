import { describe, expect, it } from 'vitest';
import { amiSsmParameterResolves } from '../../../lambda/core/checks/ami-ssm-parameter-resolves.js';
import type { SsmParameterTermLookup } from '../../../lambda/core/facts/aws.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import {
  anAmiFacts,
  anAwsInventory,
  SCAN_TIME,
  someAwsFacts,
  throttled,
} from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';

const now = SCAN_TIME;

function evaluateWith(name: string, value: SsmParameterTermLookup['value']) {
  const raw = aNodeClassObject({
    spec: { amiSelectorTerms: [{ name: 'x-*' }, { ssmParameter: name }] },
  });
  const facts = someAwsFacts({
    amis: ok(anAmiFacts({ ssmParameters: [{ termIndex: 1, name, value }] })),
  });
  return amiSsmParameterResolves.evaluate(anAwsInventory([raw], facts), { now });
}

describe('ami-ssm-parameter-resolves', () => {
  it('passes for an ami- value and notes the extra permission outside /aws/service/', () => {
    const [finding] = evaluateWith('/team/ami/node', ok('ami-0123456789abcdef0'));
    expect(finding?.status).toBe('pass');
    expect(finding?.evidence).toMatchObject({ needsExtraPermission: true });
  });

  it('needs no extra permission for a public parameter ARN under /aws/service/', () => {
    const [finding] = evaluateWith(
      'arn:aws:ssm:us-east-1::parameter/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/x86_64/standard/recommended/image_id',
      ok('ami-0123456789abcdef0')
    );
    expect(finding?.evidence).toMatchObject({ needsExtraPermission: false });
  });

  it('fails for a missing parameter, at the term', () => {
    const [finding] = evaluateWith('/team/ami/missing', ok(undefined));
    expect(finding?.status).toBe('fail');
    expect(finding?.location).toEqual({ path: 'spec.amiSelectorTerms[1].ssmParameter' });
  });

  it('fails for a value that is not an AMI id', () => {
    const [finding] = evaluateWith('/team/ami/node', ok('resolve:ssm:/x'));
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('not an ami- id');
  });

  it('never repeats a value that is not an AMI id: the parameter may hold a secret', () => {
    const [finding] = evaluateWith('/prod/db/password', ok('hunter2-db-password'));
    expect(finding?.status).toBe('fail');
    expect(JSON.stringify(finding)).not.toContain('hunter2');
  });

  it('shows a well-formed image id, but not an ami- prefixed value that is not one', () => {
    const [shown] = evaluateWith('/team/ami/node', ok('ami-0123456789abcdef0'));
    expect(shown?.message).toContain('ami-0123456789abcdef0');
    const [hidden] = evaluateWith('/team/ami/node', ok('ami-but-really-a-secret-token'));
    expect(hidden?.status).toBe('pass');
    expect(JSON.stringify(hidden)).not.toContain('secret-token');
    expect(hidden?.evidence).toMatchObject({ valueLength: 29 });
  });

  it('reports an error when the parameter could not be read', () => {
    const [finding] = evaluateWith('/team/ami/node', throttled('ssm:GetParameter'));
    expect(finding?.status).toBe('error');
    expect(finding?.evidence).toMatchObject({ reason: 'throttled' });
  });

  it('is not applicable without ssmParameter terms', () => {
    const raw = aNodeClassObject();
    expect(
      amiSsmParameterResolves.evaluate(anAwsInventory([raw], someAwsFacts()), { now })[0]?.status
    ).toBe('not-applicable');
  });
});
