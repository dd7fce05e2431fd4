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

describe('memoizeAwsFactsPort: SSM parameters', () => {
  /** A port that answers getParameters, recording each batch. */
  function batchingAccount(values: Record<string, string>) {
    const account = new InMemoryAwsFacts({ parameters: values });
    const batches: string[][] = [];
    const port = Object.assign(account, {
      async getParameters(names: readonly string[]) {
        batches.push([...names]);
        return new Map(names.map((name) => [name, values[name]] as const));
      },
    });
    return { port, batches, account };
  }

  it('reads 14 names asked for in one turn in 2 batches (10 + 4), each name once', async () => {
    // Prepare
    const names = Array.from({ length: 14 }, (_, index) => `/p/${index}`);
    const { port, batches, account } = batchingAccount({ '/p/0': 'ami-0', '/p/13': 'ami-13' });
    const memo = memoizeAwsFactsPort(port);
    // Act
    const values = await Promise.all([...names, ...names].map((name) => memo.getParameter(name)));
    const later = await memo.getParameter('/p/13');
    // Assess
    expect(batches.map((batch) => batch.length)).toEqual([10, 4]);
    expect(new Set(batches.flat()).size).toBe(14);
    expect(account.callsTo('getParameter')).toHaveLength(0);
    expect(values[0]).toBe('ami-0');
    expect(values[1]).toBeUndefined();
    expect(values[27]).toBe('ami-13');
    expect(later).toBe('ami-13');
  });

  it("fails every name of a failed batch with the batch's error", async () => {
    const { port } = batchingAccount({});
    port.getParameters = async () => {
      throw throttling('ssm');
    };
    const memo = memoizeAwsFactsPort(port);
    const reads = ['/a', '/b'].map((name) => memo.getParameter(name));
    for (const read of reads) await expect(read).rejects.toMatchObject({ reason: 'throttled' });
  });

  it('reads name by name from a port without getParameters', async () => {
    const account = new InMemoryAwsFacts({ parameters: { '/a': 'ami-a' } });
    const memo = memoizeAwsFactsPort(account);
    expect(await Promise.all([memo.getParameter('/a'), memo.getParameter('/a')])).toEqual([
      'ami-a',
      'ami-a',
    ]);
    expect(account.callsTo('getParameter')).toEqual(['/a']);
  });
});
