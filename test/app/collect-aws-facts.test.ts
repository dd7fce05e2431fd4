import { describe, expect, it } from 'vitest';
import { createAwsFactsEnricher } from '../../lambda/app/collect-aws-facts.js';
import { CHECKS } from '../../lambda/core/checks/index.js';
import { runChecks } from '../../lambda/core/evaluate.js';
import { ok, unavailable } from '../../lambda/core/facts/slice.js';
import type { ClusterContext } from '../../lambda/core/inventory.js';
import { emptyInventory, nodeClassKey } from '../../lambda/core/inventory.js';
import {
  aClusterFacts,
  anImage,
  anInstanceProfile,
  aRole,
  aSecurityGroup,
  aSubnet,
  InMemoryAwsFacts,
  SCAN_TIME,
  throttling,
} from '../support/aws-builders.js';
import { aNodeClassEntry, aNodeClassObject } from '../support/builders.js';

const now = SCAN_TIME;
const AL2023_X86 =
  '/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/x86_64/standard/recommended/image_id';
const AL2023_ARM =
  '/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/arm64/standard/recommended/image_id';

const account = () =>
  new InMemoryAwsFacts({
    images: [
      anImage({ id: 'ami-0team1', name: 'team-node-1', creationDate: '2026-09-01T00:00:00Z' }),
      anImage({
        id: 'ami-0team2',
        name: 'team-node-2',
        creationDate: '2026-10-20T00:00:00Z',
        state: 'pending',
      }),
      anImage({
        id: 'ami-0al2023x',
        ownerId: '137112412989',
        ownerAlias: 'amazon',
        name: 'al2023-x86',
      }),
      anImage({
        id: 'ami-0al2023a',
        ownerId: '137112412989',
        ownerAlias: 'amazon',
        name: 'al2023-arm',
        architecture: 'arm64',
      }),
    ],
    parameters: { [AL2023_X86]: 'ami-0al2023x', [AL2023_ARM]: 'ami-0al2023a' },
    subnets: [aSubnet(), aSubnet({ id: 'subnet-0b', availableIpAddressCount: 3 })],
    securityGroups: [aSecurityGroup()],
    roles: [aRole()],
    instanceProfiles: [anInstanceProfile()],
  });

function cluster(name: string): ClusterContext {
  return { name, partition: 'aws', region: 'us-east-1', aws: ok(aClusterFacts()) };
}

describe('aws facts enricher', () => {
  it('resolves an alias NodeClass through SSM and one image-id query, its state filtered locally', async () => {
    // Prepare
    const facts = account();
    const raw = aNodeClassObject({ spec: { amiSelectorTerms: [{ alias: 'al2023@latest' }] } });
    const inventory = emptyInventory({
      clusters: [cluster('demo')],
      nodeClasses: [aNodeClassEntry(raw, 'demo')],
    });
    // Act
    const enriched = await createAwsFactsEnricher({ port: facts, now }).enrich(inventory);
    // Assess
    expect(enriched.inputs.has('aws')).toBe(true);
    const amis = enriched.awsFacts.get(nodeClassKey('demo', 'default'))?.amis;
    expect(amis?.status).toBe('ok');
    if (amis?.status !== 'ok' || amis.value.available.status !== 'ok') return;
    expect(amis.value.alias?.parameters).toHaveLength(5);
    expect(
      amis.value.available.value.selected.map((item) => `${item.image.id}/${item.variant}`)
    ).toEqual(['ami-0al2023a/standard', 'ami-0al2023x/standard']);
    expect(facts.callsTo('describeImages')).toEqual([
      {
        filters: [{ name: 'image-id', values: ['ami-0al2023x', 'ami-0al2023a'] }],
        includeDeprecated: true,
      },
    ]);
    // The facts still show the query as Karpenter sends it.
    expect(amis.value.available.value.queries[0]?.query.filters).toEqual([
      { name: 'image-id', values: ['ami-0al2023x', 'ami-0al2023a'] },
      { name: 'state', values: ['available'] },
    ]);
  });

  it('answers both selections from one unfiltered DescribeImages: a pending image only ignoring state', async () => {
    // Prepare
    const facts = account();
    const raw = aNodeClassObject({ spec: { amiSelectorTerms: [{ name: 'team-node-*' }] } });
    const inventory = emptyInventory({
      clusters: [cluster('demo')],
      nodeClasses: [aNodeClassEntry(raw, 'demo')],
    });
    // Act
    const enriched = await createAwsFactsEnricher({ port: facts, now }).enrich(inventory);
    // Assess
    const amis = enriched.awsFacts.get(nodeClassKey('demo', 'default'))?.amis;
    if (amis?.status !== 'ok') throw new Error('amis unavailable');
    const { available, ignoringState } = amis.value;
    if (available.status !== 'ok' || ignoringState.status !== 'ok') throw new Error('unavailable');
    expect(facts.callsTo('describeImages')).toHaveLength(1);
    expect(facts.callsTo('describeImages')[0]).toMatchObject({
      filters: [{ name: 'name', values: ['team-node-*'] }],
    });
    expect(available.value.queries[0]?.images.map((image) => image.id)).toEqual(['ami-0team1']);
    expect(available.value.selected.map((item) => item.image.id)).toEqual(['ami-0team1']);
    expect(ignoringState.value.queries[0]?.images.map((image) => image.id).sort()).toEqual([
      'ami-0team1',
      'ami-0team2',
    ]);
    expect(ignoringState.value.selected.map((item) => item.image.id)).toEqual(['ami-0team2']);
    expect(ignoringState.value.queries[0]?.query.filters).toEqual([
      { name: 'name', values: ['team-node-*'] },
    ]);
  });

  it('marks both selections unavailable when the one DescribeImages fails', async () => {
    const facts = account();
    facts.failWhen = (method) => (method === 'describeImages' ? throttling() : undefined);
    const raw = aNodeClassObject({ spec: { amiSelectorTerms: [{ name: 'team-node-*' }] } });
    const inventory = emptyInventory({
      clusters: [cluster('demo')],
      nodeClasses: [aNodeClassEntry(raw, 'demo')],
    });
    const enriched = await createAwsFactsEnricher({ port: facts, now }).enrich(inventory);
    const amis = enriched.awsFacts.get(nodeClassKey('demo', 'default'))?.amis;
    expect(amis).toMatchObject({
      status: 'ok',
      value: {
        available: { status: 'unavailable', reason: 'throttled' },
        ignoringState: { status: 'unavailable', reason: 'throttled' },
      },
    });
  });

  it('marks alias facts unavailable when the Kubernetes version could not be read', async () => {
    const raw = aNodeClassObject({ spec: { amiSelectorTerms: [{ alias: 'al2023@latest' }] } });
    const inventory = emptyInventory({
      clusters: [
        { ...cluster('demo'), aws: unavailable('access-denied', 'eks:DescribeCluster denied') },
      ],
      nodeClasses: [aNodeClassEntry(raw, 'demo')],
    });
    const enriched = await createAwsFactsEnricher({ port: account(), now }).enrich(inventory);
    const facts = enriched.awsFacts.get(nodeClassKey('demo', 'default'));
    expect(facts?.amis).toMatchObject({ status: 'unavailable', reason: 'access-denied' });
    expect(facts?.subnets?.status).toBe('ok');
  });

  it('follows the instance profile to its role', async () => {
    const raw = aNodeClassObject({
      spec: { role: undefined, instanceProfile: 'KarpenterNodeInstanceProfile' },
    });
    const inventory = emptyInventory({
      clusters: [cluster('demo')],
      nodeClasses: [aNodeClassEntry(raw, 'demo')],
    });
    const enriched = await createAwsFactsEnricher({ port: account(), now }).enrich(inventory);
    const facts = enriched.awsFacts.get(nodeClassKey('demo', 'default'));
    expect(facts?.instanceProfile).toMatchObject({
      status: 'ok',
      value: { name: 'KarpenterNodeInstanceProfile' },
    });
    expect(facts?.nodeRole).toMatchObject({
      status: 'ok',
      value: { source: 'instance-profile', name: 'KarpenterNodeRole-demo' },
    });
  });

  it('issues each distinct query once for 200 NodeClasses over 10 clusters sharing 5 selectors', async () => {
    // Prepare
    const facts = account();
    const selectors = [
      [{ name: 'team-node-*' }],
      [{ tags: { team: 'a' } }],
      [{ id: 'ami-0team1' }],
      [{ name: 'team-node-*', owner: 'self' }],
      [{ alias: 'al2023@latest' }],
    ];
    const clusters = Array.from({ length: 10 }, (_, index) => cluster(`c${index}`));
    const nodeClasses = Array.from({ length: 200 }, (_, index) =>
      aNodeClassEntry(
        aNodeClassObject({
          name: `nc-${index}`,
          spec: {
            amiSelectorTerms: selectors[index % 5],
            securityGroupSelectorTerms: [{ name: 'demo-nodes' }],
          },
        }),
        `c${index % 10}`
      )
    );
    const inventory = emptyInventory({ clusters, nodeClasses });
    // Act
    const enriched = await createAwsFactsEnricher({ port: facts, now }).enrich(inventory);
    // Assess: 4 term queries + 1 alias query (state filtered locally), the id term's and the
    // alias' image-id queries merged into one call; 5 SSM parameters.
    expect(enriched.awsFacts.size).toBe(200);
    const distinct = (method: Parameters<InMemoryAwsFacts['callsTo']>[0]) =>
      new Set(facts.callsTo(method).map((argument) => JSON.stringify(argument))).size;
    expect(facts.callsTo('describeImages')).toHaveLength(4);
    expect(distinct('describeImages')).toBe(4);
    const idCalls = facts
      .callsTo('describeImages')
      .filter((query) => JSON.stringify(query).includes('"image-id"'));
    expect(idCalls).toHaveLength(1);
    expect(JSON.stringify(idCalls[0])).toContain('ami-0team1');
    expect(facts.callsTo('getParameter')).toHaveLength(5);
    expect(facts.callsTo('describeSubnets')).toHaveLength(1);
    expect(facts.callsTo('describeSecurityGroups')).toHaveLength(1);
    expect(facts.callsTo('getRole')).toEqual(['KarpenterNodeRole-demo']);
  });

  it('completes under 30% throttling and reports errors only where data is missing', async () => {
    // Prepare: every third distinct call is throttled (deterministic 1-in-3 ≈ 30%).
    const facts = account();
    let count = 0;
    const failing = new Set<string>();
    facts.failWhen = (method, argument) => {
      const key = `${method} ${JSON.stringify(argument)}`;
      count++;
      if (count % 3 === 0) failing.add(key);
      return failing.has(key) ? throttling(method) : undefined;
    };
    const nodeClasses = Array.from({ length: 20 }, (_, index) =>
      aNodeClassEntry(
        aNodeClassObject({
          name: `nc-${index}`,
          spec: {
            amiSelectorTerms: [[{ name: 'team-node-*' }], [{ alias: 'al2023@latest' }]][index % 2],
            subnetSelectorTerms: [
              { tags: { 'karpenter.sh/discovery': index % 4 < 2 ? 'demo' : '*' } },
            ],
          },
        }),
        'demo'
      )
    );
    const inventory = emptyInventory({ clusters: [cluster('demo')], nodeClasses });
    // Act
    const enriched = await createAwsFactsEnricher({ port: facts, now }).enrich(inventory);
    const { findings } = runChecks(
      enriched,
      CHECKS.filter((check) => check.group === 'aws' && !check.id.startsWith('controller-')),
      { now }
    );
    // Assess: every NodeClass was evaluated by every check, and each error names throttling.
    expect(failing.size).toBeGreaterThan(0);
    expect(new Set(findings.map((finding) => finding.resource.name)).size).toBe(20);
    const errors = findings.filter((finding) => finding.status === 'error');
    expect(errors.length).toBeGreaterThan(0);
    for (const finding of errors) expect(finding.message).toMatch(/throttled|Rate exceeded/);
    expect(findings.some((finding) => finding.status === 'pass')).toBe(true);
    // Subnet errors appear exactly for NodeClasses whose subnet query was throttled.
    for (const finding of findings.filter((item) => item.checkId === 'subnets-resolve')) {
      const facts = enriched.awsFacts.get(nodeClassKey('demo', finding.resource.name));
      expect(finding.status === 'error').toBe(facts?.subnets?.status === 'unavailable');
    }
  });
});
