import { describe, expect, it } from 'vitest';
import { amiSsmParameterResolves } from '../../../lambda/core/checks/ami-ssm-parameter-resolves.js';
import type { Image, SsmParameterTermLookup } from '../../../lambda/core/facts/aws.js';
import { ok, unavailable } from '../../../lambda/core/facts/slice.js';
import {
  anAmiFacts,
  anAwsInventory,
  anImage,
  SCAN_TIME,
  someAwsFacts,
  throttled,
} from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';

const now = SCAN_TIME;
const VISIBLE = 'ami-0123456789abcdef0';
const PUBLIC =
  '/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/x86_64/standard/recommended/image_id';

function evaluateWith(
  name: string,
  value: SsmParameterTermLookup['value'],
  images: readonly Image[] = [anImage({ id: VISIBLE })]
) {
  const raw = aNodeClassObject({
    spec: { amiSelectorTerms: [{ name: 'x-*' }, { ssmParameter: name }] },
  });
  const facts = someAwsFacts({
    amis: ok(anAmiFacts({ images, ssmParameters: [{ termIndex: 1, name, value }] })),
  });
  return amiSsmParameterResolves.evaluate(anAwsInventory([raw], facts), { now });
}

describe('ami-ssm-parameter-resolves', () => {
  it('passes for the id of a visible image and notes the extra permission outside /aws/service/', () => {
    const [finding] = evaluateWith('/team/ami/node', ok(VISIBLE));
    expect(finding?.status).toBe('pass');
    expect(finding?.message).toContain(VISIBLE);
    expect(finding?.evidence).toEqual({
      parameter: '/team/ami/node',
      imageId: VISIBLE,
      needsExtraPermission: true,
    });
  });

  it('needs no extra permission for a public parameter ARN under /aws/service/', () => {
    const [finding] = evaluateWith(`arn:aws:ssm:us-east-1::parameter${PUBLIC}`, ok(VISIBLE));
    expect(finding?.evidence).toMatchObject({ needsExtraPermission: false });
  });

  it('fails for a missing parameter, at the term', () => {
    const [finding] = evaluateWith('/team/ami/missing', ok(undefined));
    expect(finding?.status).toBe('fail');
    expect(finding?.location).toEqual({ path: 'spec.amiSelectorTerms[1].ssmParameter' });
  });

  it.each([
    ['an image id the account cannot see', 'ami-0fedcba9876543210'],
    ['an ami- prefixed secret', 'ami-but-really-a-secret-token'],
    ['a value that is no image id', 'hunter2-db-password'],
  ])('fails for %s without its value, length or form', (_label, value) => {
    const [finding] = evaluateWith('/prod/db/password', ok(value));
    expect(finding?.status).toBe('fail');
    expect(finding?.evidence).toEqual({
      parameter: '/prod/db/password',
      cause: 'no-visible-image',
    });
    const text = JSON.stringify(finding);
    expect(text).not.toContain(value);
    expect(text).not.toMatch(new RegExp(`\\b${value.length}\\b`));
    expect(text).not.toMatch(/characters|ami- id|not an ami/);
    // The three values read the same: nothing tells an ami- value from any other.
    expect(finding?.message).toBe(
      "SSM parameter /prod/db/password does not hold the id of an image this account can see in the cluster's region (its value is not shown): Karpenter selects nothing through this term."
    );
  });

  it('shows the image id of a public parameter even when the account cannot see it', () => {
    const [finding] = evaluateWith(PUBLIC, ok('ami-0fedcba9876543210'));
    expect(finding?.status).toBe('fail');
    expect(finding?.evidence).toMatchObject({ value: 'ami-0fedcba9876543210' });
  });

  it('is an error, showing nothing, when the images could not be read', () => {
    const raw = aNodeClassObject({
      spec: { amiSelectorTerms: [{ ssmParameter: '/team/ami/node' }] },
    });
    const facts = someAwsFacts({
      amis: ok({
        ...anAmiFacts(),
        ssmParameters: [{ termIndex: 0, name: '/team/ami/node', value: ok(VISIBLE) }],
        available: throttled(),
        ignoringState: throttled(),
      }),
    });
    const [finding] = amiSsmParameterResolves.evaluate(anAwsInventory([raw], facts), { now });
    expect(finding?.status).toBe('error');
    expect(finding?.evidence).toEqual({ parameter: '/team/ami/node', reason: 'throttled' });
    expect(JSON.stringify(finding)).not.toContain(VISIBLE);
  });

  it('reports an error when the parameter could not be read', () => {
    const [finding] = evaluateWith('/team/ami/node', throttled('ssm:GetParameter'));
    expect(finding?.status).toBe('error');
    expect(finding?.evidence).toMatchObject({ reason: 'throttled' });
  });

  it('passes the collector’s reason through for a parameter outside the readable prefixes', () => {
    const [finding] = evaluateWith(
      '/team/ami/node',
      unavailable('access-denied', 'add a prefix of /team/ami/node to ssmParameterPrefixes')
    );
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('ssmParameterPrefixes');
  });

  it('is not applicable without ssmParameter terms', () => {
    const raw = aNodeClassObject();
    expect(
      amiSsmParameterResolves.evaluate(anAwsInventory([raw], someAwsFacts()), { now })[0]?.status
    ).toBe('not-applicable');
  });
});
