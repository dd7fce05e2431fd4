import { describe, expect, it } from 'vitest';
import { amiSelectorResolves } from '../../../lambda/core/checks/ami-selector-resolves.js';
import { ok, unavailable } from '../../../lambda/core/facts/slice.js';
import {
  anAmiFacts,
  anAwsInventory,
  anImage,
  awsFactsWithImages,
  SCAN_TIME,
  someAwsFacts,
  throttled,
} from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';

const now = SCAN_TIME;
const nodeClass = aNodeClassObject({ spec: { amiSelectorTerms: [{ name: 'team-node-*' }] } });

describe('ami-selector-resolves', () => {
  it('passes and names the selected image when an available image matches', () => {
    // Prepare
    const inventory = anAwsInventory([nodeClass], someAwsFacts());
    // Act
    const [finding] = amiSelectorResolves.evaluate(inventory, { now });
    // Assess
    expect(finding?.status).toBe('pass');
    expect(finding?.message).toContain('ami-0a1b2c3d4e5f00001 (x86_64)');
  });

  it('fails when no available image matches', () => {
    const facts = awsFactsWithImages([]);
    const [finding] = amiSelectorResolves.evaluate(anAwsInventory([nodeClass], facts), { now });
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('AMINotFound');
  });

  it('fails when images match but none has a supported architecture', () => {
    const images = [anImage({ architecture: 'i386' })];
    const facts = awsFactsWithImages(images);
    const [finding] = amiSelectorResolves.evaluate(anAwsInventory([nodeClass], facts), { now });
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('none is x86_64 or arm64');
  });

  it('fails with the UnsupportedAlias reason when Karpenter refuses the alias', () => {
    const amis = anAmiFacts({
      images: [],
      alias: {
        alias: 'al2@latest',
        family: 'al2',
        version: 'latest',
        kubernetesVersion: '1.33',
        unsupported: 'AL2 aliases are no longer supported on EKS 1.33+',
        parameters: [],
      },
    });
    const [finding] = amiSelectorResolves.evaluate(
      anAwsInventory([nodeClass], someAwsFacts({ amis: ok(amis) })),
      { now }
    );
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('UnsupportedAlias');
  });

  it('reports an error, not a fail, when an unreadable SSM parameter might have matched', () => {
    // Prepare: the name term matches nothing; the ssmParameter term could not be read.
    const raw = aNodeClassObject({
      spec: {
        amiFamily: 'AL2023',
        amiSelectorTerms: [{ name: 'team-node-*' }, { ssmParameter: '/team/ami' }],
      },
    });
    const facts = someAwsFacts({
      amis: ok(
        anAmiFacts({
          images: [],
          ssmParameters: [
            { termIndex: 1, name: '/team/ami', value: unavailable('access-denied', 'denied') },
          ],
        })
      ),
    });
    // Act
    const [finding] = amiSelectorResolves.evaluate(anAwsInventory([raw], facts), { now });
    // Assess
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('/team/ami');
    expect(finding?.message).toContain('access-denied');
  });

  it('reports an error naming the reason when DescribeImages was throttled', () => {
    const facts = someAwsFacts({ amis: ok({ ...anAmiFacts(), available: throttled() }) });
    const [finding] = amiSelectorResolves.evaluate(anAwsInventory([nodeClass], facts), { now });
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('throttled');
  });

  it('reports an error when the AMI facts are unavailable as a whole', () => {
    const facts = someAwsFacts({ amis: unavailable('unknown', 'Kubernetes version unknown') });
    const [finding] = amiSelectorResolves.evaluate(anAwsInventory([nodeClass], facts), { now });
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('Kubernetes version unknown');
  });
});
