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

  it('hides in its queries the value of a parameter that names no visible image', () => {
    // Prepare: one id term and two parameter terms; the images query found nothing
    const secret = 'ami-0fedcba9876543210';
    const raw = aNodeClassObject({
      spec: {
        amiSelectorTerms: [
          { id: 'ami-0aaaaaaaaaaaaaaaa' },
          { ssmParameter: '/team/ami/node' },
          { ssmParameter: '/team/ami/same-as-id' },
        ],
      },
    });
    const query = {
      filters: [
        {
          name: 'image-id',
          values: ['ami-0aaaaaaaaaaaaaaaa', secret, 'ami-0aaaaaaaaaaaaaaaa'],
        },
        { name: 'state', values: ['available'] },
      ],
      includeDeprecated: true,
    };
    const selection = { queries: [{ query, termIndexes: [0, 1, 2], images: [], selected: [] }] };
    const amis = {
      ssmParameters: [
        { termIndex: 1, name: '/team/ami/node', value: ok<string | undefined>(secret) },
        {
          termIndex: 2,
          name: '/team/ami/same-as-id',
          value: ok<string | undefined>('ami-0aaaaaaaaaaaaaaaa'),
        },
      ],
      available: ok({ ...selection, matchCount: 0, selected: [] }),
      ignoringState: ok({ ...selection, matchCount: 0, selected: [] }),
    };
    // Act
    const [finding] = amiSelectorResolves.evaluate(
      anAwsInventory([raw], someAwsFacts({ amis: ok(amis) })),
      { now }
    );
    // Assess: the id term's own text stays; the parameter's value never appears
    expect(finding?.status).toBe('fail');
    expect(JSON.stringify(finding)).not.toContain(secret);
    expect(finding?.evidence?.queries).toEqual([
      {
        ...query,
        filters: [
          {
            name: 'image-id',
            values: [
              'ami-0aaaaaaaaaaaaaaaa',
              '(value of SSM parameter /team/ami/node, not shown)',
              'ami-0aaaaaaaaaaaaaaaa',
            ],
          },
          { name: 'state', values: ['available'] },
        ],
      },
    ]);
  });

  it('is a follow-on of ami-ssm-parameter-resolves when only parameter terms match nothing', () => {
    const raw = aNodeClassObject({ spec: { amiSelectorTerms: [{ ssmParameter: '/team/ami' }] } });
    const query = {
      filters: [{ name: 'image-id', values: ['ami-0fedcba9876543210'] }],
      includeDeprecated: true,
    };
    const selection = {
      queries: [{ query, termIndexes: [0], images: [], selected: [] }],
      matchCount: 0,
      selected: [],
    };
    const amis = {
      ssmParameters: [
        { termIndex: 0, name: '/team/ami', value: ok<string | undefined>('ami-0fedcba9876543210') },
      ],
      available: ok(selection),
      ignoringState: ok(selection),
    };
    const [finding] = amiSelectorResolves.evaluate(
      anAwsInventory([raw], someAwsFacts({ amis: ok(amis) })),
      { now }
    );
    expect(finding?.evidence).toMatchObject({ cause: 'no-match' });
    expect(finding?.causedBy).toEqual({ checkId: 'ami-ssm-parameter-resolves' });
  });
});
