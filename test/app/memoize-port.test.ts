import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AWS_FACT_ACTIONS } from '../../lambda/adapters/aws/fact-descriptors.js';
import { FACT_SHARING } from '../../lambda/app/fact-sharing.js';
import {
  MERGED_FILTER_VALUES,
  memoizeAwsFactsPort,
  queryKey,
} from '../../lambda/app/memoize-port.js';
import type { SecurityGroup, Subnet } from '../../lambda/core/facts/aws.js';
import type { AwsFactsPort, FilterQuery } from '../../lambda/core/ports/aws-facts.js';
import type { SecurityGroupSelectorTerm, SubnetSelectorTerm } from '../../lambda/core/schema.js';
import { securityGroupQueries } from '../../lambda/core/selectors/security-groups.js';
import { subnetQueries } from '../../lambda/core/selectors/subnets.js';
import {
  anImage,
  aSecurityGroup,
  aSubnet,
  InMemoryAwsFacts,
  throttling,
} from '../support/aws-builders.js';

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

describe('merged subnet and security-group queries', () => {
  /** EC2's filter semantics, written out apart from the scanner's matcher: values ORed, filters ANDed, `*`/`?` wildcards, `\` escapes. */
  const pattern = (value: string) =>
    new RegExp(
      `^${value.replace(/\\(.)|([*?])|([^\\*?]+)/gs, (_m, escaped, wild, text) =>
        escaped !== undefined
          ? escaped.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
          : wild === '*'
            ? '.*'
            : wild === '?'
              ? '.'
              : String(text).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      )}$`,
      's'
    );
  const ec2Matches = (
    item: { id: string; name?: string; tags: Readonly<Record<string, string>> },
    query: FilterQuery
  ) =>
    query.filters.every((filter) =>
      filter.values.some((value) => {
        const re = pattern(value);
        if (filter.name === 'tag-key') return Object.keys(item.tags).some((key) => re.test(key));
        if (filter.name.startsWith('tag:')) {
          const tag = item.tags[filter.name.slice(4)];
          return tag !== undefined && re.test(tag);
        }
        if (filter.name === 'group-name') return item.name !== undefined && re.test(item.name);
        return re.test(item.id);
      })
    );

  const ids = ['n-1', 'n-2', 'n-3', 'n-4', 'n-5', 'n-6'];
  const tagMap = fc.dictionary(
    fc.constantFrom('team', 'Team', 'zone'),
    fc.constantFrom('x', 'X', 'y', 'x*', '')
  );
  const items = fc.uniqueArray(
    fc.record({ id: fc.constantFrom(...ids), name: fc.constantFrom('a', 'b', 'a*'), tags: tagMap }),
    { selector: (item) => item.id, maxLength: 6 }
  );
  const term = fc.oneof(
    fc.record({ id: fc.constantFrom(...ids, 'n-*', 'n-?') }),
    fc.record({ name: fc.constantFrom('a', 'b', 'a*', 'a\\*') }),
    fc.record({
      tags: fc.dictionary(
        fc.constantFrom('team', 'Team', 'zone', 'te*'),
        fc.constantFrom('x', 'X', 'y', '*', 'x\\*'),
        {
          minKeys: 1,
          maxKeys: 2,
        }
      ),
    })
  );
  const nodeClasses = fc.array(fc.array(term, { minLength: 1, maxLength: 3 }), {
    minLength: 1,
    maxLength: 8,
  });

  function portOver(account: { subnets: readonly Subnet[]; groups: readonly SecurityGroup[] }) {
    const sent: FilterQuery[] = [];
    const port = {
      ...new InMemoryAwsFacts({}),
      describeSubnets: async (query: FilterQuery) => {
        sent.push(query);
        return account.subnets.filter((subnet) => ec2Matches(subnet, query));
      },
      describeSecurityGroups: async (query: FilterQuery) => {
        sent.push(query);
        return account.groups.filter((group) => ec2Matches(group, query));
      },
    } as unknown as AwsFactsPort;
    return { port, sent };
  }

  it('answers every query as its own call would, in fewer calls', async () => {
    await fc.assert(
      fc.asyncProperty(items, nodeClasses, async (generated, classes) => {
        // Prepare
        const subnets = generated.map((item) => aSubnet({ id: item.id, tags: item.tags }));
        const groups = generated.map((item) =>
          aSecurityGroup({ id: item.id, name: item.name, tags: item.tags })
        );
        const subnetQueriesOf = classes.map((terms) =>
          subnetQueries(terms.filter((t) => !('name' in t)) as SubnetSelectorTerm[])
        );
        const groupQueriesOf = classes.map((terms) =>
          securityGroupQueries(terms as SecurityGroupSelectorTerm[])
        );
        const { port: direct } = portOver({ subnets, groups });
        const { port: inner, sent } = portOver({ subnets, groups });
        const memo = memoizeAwsFactsPort(inner);

        // Act: every NodeClass asks in the same turn, as a scan does
        const merged = await Promise.all([
          ...subnetQueriesOf.flat().map((query) => memo.describeSubnets(query)),
          ...groupQueriesOf.flat().map((query) => memo.describeSecurityGroups(query)),
        ]);
        const own = await Promise.all([
          ...subnetQueriesOf.flat().map((query) => direct.describeSubnets(query)),
          ...groupQueriesOf.flat().map((query) => direct.describeSecurityGroups(query)),
        ]);

        // Assess
        const idsOf = (list: readonly { id: string }[] | undefined) =>
          (list ?? []).map((item) => item.id).sort();
        expect(merged.map(idsOf)).toEqual(own.map(idsOf));
        const distinct = new Set([
          ...subnetQueriesOf.flat().map((query) => `s ${queryKey(query)}`),
          ...groupQueriesOf.flat().map((query) => `g ${queryKey(query)}`),
        ]);
        expect(sent.length).toBeLessThanOrEqual(distinct.size);
      }),
      { numRuns: 300 }
    );
  });

  it('sends the discovery tags of many clusters as one query, split at the filter-value limit', async () => {
    // Prepare
    const clusters = Array.from({ length: MERGED_FILTER_VALUES + 5 }, (_, index) => `c-${index}`);
    const subnets = clusters.map((cluster, index) =>
      aSubnet({ id: `subnet-${index}`, tags: { 'karpenter.sh/discovery': cluster } })
    );
    const { port: inner, sent } = portOver({ subnets, groups: [] });
    const memo = memoizeAwsFactsPort(inner);

    // Act
    const answers = await Promise.all(
      clusters.map((cluster) =>
        memo.describeSubnets({
          filters: [{ name: 'tag:karpenter.sh/discovery', values: [cluster] }],
        })
      )
    );

    // Assess
    expect(answers.map((answer) => answer.map((subnet) => subnet.id))).toEqual(
      clusters.map((_, index) => [`subnet-${index}`])
    );
    expect(sent.map((query) => query.filters[0]?.values.length)).toEqual([MERGED_FILTER_VALUES, 5]);
  });
});

describe('merged image queries', () => {
  const images = [
    anImage({ id: 'ami-0a', name: 'team-a-2025' }),
    anImage({ id: 'ami-0b', name: 'team-b-2025' }),
    anImage({ id: 'ami-0c', name: 'team-a-2026', ownerId: '137112412989', ownerAlias: 'amazon' }),
    anImage({ id: 'ami-0d', name: 'team-?-literal*' }),
  ];
  const queries = [
    {
      filters: [{ name: 'name', values: ['team-a-*'] }],
      owners: ['self'],
      includeDeprecated: true,
    },
    {
      filters: [{ name: 'name', values: ['team-b-*'] }],
      owners: ['self'],
      includeDeprecated: true,
    },
    {
      filters: [{ name: 'name', values: ['team-\\?-*'] }],
      owners: ['self'],
      includeDeprecated: true,
    },
    {
      filters: [{ name: 'name', values: ['team-a-*'] }],
      owners: ['self', 'amazon'],
      includeDeprecated: true,
    },
    { filters: [{ name: 'image-id', values: ['ami-0b'] }], includeDeprecated: true },
    { filters: [{ name: 'image-id', values: ['ami-0c'] }], includeDeprecated: true },
    { filters: [{ name: 'image-id', values: ['ami-0*'] }], includeDeprecated: true },
  ];

  it('merges name patterns of equal owners and literal ids, answering each query as its own call', async () => {
    // Prepare
    const direct = new InMemoryAwsFacts({ images });
    const account = new InMemoryAwsFacts({ images });
    const memo = memoizeAwsFactsPort(account);

    // Act
    const merged = await Promise.all(queries.map((query) => memo.describeImages(query)));
    const alone = await Promise.all(queries.map((query) => direct.describeImages(query)));

    // Assess: self names in one call, self+amazon apart, literal ids in one, the id pattern alone.
    const ids = (answer: readonly { id: string }[]) => answer.map((image) => image.id).sort();
    expect(merged.map(ids)).toEqual(alone.map(ids));
    expect(merged.map(ids)).toEqual([
      ['ami-0a'],
      ['ami-0b'],
      ['ami-0d'],
      ['ami-0a', 'ami-0c'],
      ['ami-0b'],
      ['ami-0c'],
      ['ami-0a', 'ami-0b', 'ami-0c', 'ami-0d'],
    ]);
    // Merged calls leave at the next macrotask, queries sent alone at once.
    expect(account.callsTo('describeImages')).toEqual([
      queries[6],
      {
        filters: [{ name: 'name', values: ['team-a-*', 'team-b-*', 'team-\\?-*'] }],
        owners: ['self'],
        includeDeprecated: true,
      },
      queries[3],
      {
        filters: [{ name: 'image-id', values: ['ami-0b', 'ami-0c'] }],
        includeDeprecated: true,
      },
    ]);
  });
});

describe('the sharing table', () => {
  /** Two calls of each method a scan must share (same query, filters and values reordered). */
  const twice: {
    readonly [M in keyof AwsFactsPort]-?: (port: AwsFactsPort) => Promise<unknown>[];
  } = {
    describeImages: (port) => [
      port.describeImages({
        filters: [
          { name: 'tag:a', values: ['1', '2'] },
          { name: 'name', values: ['x'] },
        ],
        includeDeprecated: true,
      }),
      port.describeImages({
        filters: [
          { name: 'name', values: ['x'] },
          { name: 'tag:a', values: ['2', '1'] },
        ],
        includeDeprecated: true,
      }),
    ],
    describeSubnets: (port) => [
      port.describeSubnets({ filters: [{ name: 'tag:a', values: ['1', '2'] }] }),
      port.describeSubnets({ filters: [{ name: 'tag:a', values: ['2', '1'] }] }),
    ],
    describeSecurityGroups: (port) => [
      port.describeSecurityGroups({ filters: [{ name: 'group-name', values: ['a'] }] }),
      port.describeSecurityGroups({ filters: [{ name: 'group-name', values: ['a'] }] }),
    ],
    describeCapacityReservations: (port) => [
      port.describeCapacityReservations({ filters: [], ids: ['cr-1', 'cr-2'] }),
      port.describeCapacityReservations({ filters: [], ids: ['cr-2', 'cr-1'] }),
    ],
    describeInstanceTypeOfferings: (port) => [
      port.describeInstanceTypeOfferings(),
      port.describeInstanceTypeOfferings(),
    ],
    describeInstanceTypes: (port) => [port.describeInstanceTypes(), port.describeInstanceTypes()],
    getParameter: (port) => [port.getParameter('/a'), port.getParameter('/a')],
    getParameters: () => [],
    getInstanceProfile: (port) => [port.getInstanceProfile('p'), port.getInstanceProfile('p')],
    getRole: (port) => [port.getRole('r'), port.getRole('r')],
    getEbsEncryptionDefaults: (port) => [
      port.getEbsEncryptionDefaults?.() ?? Promise.resolve(undefined),
      port.getEbsEncryptionDefaults?.() ?? Promise.resolve(undefined),
    ],
    describeKmsKey: (port) => [
      port.describeKmsKey?.('alias/nodes') ?? Promise.resolve(undefined),
      port.describeKmsKey?.('alias/nodes') ?? Promise.resolve(undefined),
    ],
  };

  const methods = Object.keys(FACT_SHARING) as (keyof typeof FACT_SHARING)[];
  const memoised = methods.filter((method) => FACT_SHARING[method].share !== 'batch-form-of');

  it('has an entry for every method the fact descriptors answer', () => {
    // Assess
    expect([...methods].sort()).toEqual(Object.keys(AWS_FACT_ACTIONS).sort());
  });

  it('builds the memo: one method per entry, none for a batch form (names go through its lookup)', () => {
    // Act
    const memo = memoizeAwsFactsPort(new InMemoryAwsFacts({}));

    // Assess
    expect(Object.keys(memo).sort()).toEqual([...memoised].sort());
  });

  it.each(memoised)('%s: two identical queries in one scan share one call', async (method) => {
    // Prepare
    const account = new InMemoryAwsFacts({});
    const memo = memoizeAwsFactsPort(account);

    // Act
    const answers = await Promise.all(twice[method](memo));

    // Assess
    expect(answers).toHaveLength(2);
    expect(account.callsTo(method)).toHaveLength(1);
  });
});
