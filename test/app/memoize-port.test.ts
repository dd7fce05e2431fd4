import { describe, expect, it } from 'vitest';
import { memoizeAwsFactsPort, queryKey } from '../../lambda/app/memoize-port.js';
import { anImage, InMemoryAwsFacts, throttling } from '../support/aws-builders.js';

describe('queryKey', () => {
  it('ignores the order of filters and values', () => {
    const a = {
      filters: [
        { name: 'tag:a', values: ['1'] },
        { name: 'image-id', values: ['ami-2', 'ami-1'] },
      ],
      includeDeprecated: true,
    };
    const b = {
      filters: [
        { name: 'image-id', values: ['ami-1', 'ami-2'] },
        { name: 'tag:a', values: ['1'] },
      ],
      includeDeprecated: true,
    };
    expect(queryKey(a)).toBe(queryKey(b));
    expect(queryKey({ ...a, owners: ['self'] })).not.toBe(queryKey(a));
    expect(queryKey({ ...a, includeDeprecated: false })).not.toBe(queryKey(a));
  });
});

describe('memoizeAwsFactsPort', () => {
  it('issues identical queries once and shares concurrent calls', async () => {
    // Prepare
    const account = new InMemoryAwsFacts({ images: [anImage()] });
    const port = memoizeAwsFactsPort(account);
    const query = {
      filters: [{ name: 'image-id', values: ['ami-0a1b2c3d4e5f00001'] }],
      includeDeprecated: true,
    };
    // Act
    const results = await Promise.all([
      port.describeImages(query),
      port.describeImages({ ...query }),
    ]);
    await port.describeImages(query);
    await port.getRole('r');
    await port.getRole('r');
    // Assess
    expect(results[0]).toBe(results[1]);
    expect(account.callsTo('describeImages')).toHaveLength(1);
    expect(account.callsTo('getRole')).toHaveLength(1);
  });

  it('memoises failures so a throttled query is not repeated by every NodeClass', async () => {
    const account = new InMemoryAwsFacts({});
    account.failWhen = () => throttling('iam');
    const port = memoizeAwsFactsPort(account);
    await expect(port.getRole('r')).rejects.toMatchObject({ reason: 'throttled' });
    await expect(port.getRole('r')).rejects.toMatchObject({ reason: 'throttled' });
    expect(account.callsTo('getRole')).toHaveLength(1);
  });
});
