// A world file is JSON: `__proto__`, `constructor` and `toString` arrive as ordinary own keys and
// must stay ordinary tag keys (and parameter names) all the way to the offline EC2 answers.
import { describe, expect, it } from 'vitest';
import { parseWorld } from '../../../lambda/adapters/world/load-world.js';
import { createWorldAwsFacts } from '../../../lambda/adapters/world/world-facts.js';
import { createWorldObjectSource } from '../../../lambda/adapters/world/world-objects.js';
import { termImageQuery } from '../../../lambda/core/ami/queries.js';
import type { EC2NodeClass } from '../../../lambda/core/schema.js';
import { capacityReservationQueries } from '../../../lambda/core/selectors/capacity-reservations.js';
import { securityGroupQueries } from '../../../lambda/core/selectors/security-groups.js';
import { subnetQueries } from '../../../lambda/core/selectors/subnets.js';

const ACCOUNT = '111122223333';
const NOW = new Date('2026-11-22T12:00:00Z');
const KEYS = ['__proto__', 'constructor', 'toString'] as const;
const slug = (key: string) => key.replace(/_/g, 'u').toLowerCase();
const tagsOf = (key: string) => [
  { Key: key, Value: 'x' },
  { Key: 'Name', Value: slug(key) },
];

/** One resource of each kind per special key, one plain one, and NodeClasses selecting each key. */
const WORLD_TEXT = JSON.stringify({
  version: 1,
  account: ACCOUNT,
  region: 'us-east-1',
  ec2: {
    subnets: [
      ...KEYS.map((key) => ({ SubnetId: `subnet-${slug(key)}`, Tags: tagsOf(key) })),
      { SubnetId: 'subnet-plain', Tags: [{ Key: 'Name', Value: 'plain' }] },
    ],
    securityGroups: [
      ...KEYS.map((key) => ({ GroupId: `sg-${slug(key)}`, Tags: tagsOf(key) })),
      { GroupId: 'sg-plain' },
    ],
    images: [
      ...KEYS.map((key, i) => ({
        ImageId: `ami-000000000000000${i}`,
        OwnerId: ACCOUNT,
        State: 'available',
        Tags: tagsOf(key),
      })),
      { ImageId: 'ami-00000000000000ff', OwnerId: ACCOUNT, State: 'available' },
    ],
    capacityReservations: [
      ...KEYS.map((key) => ({
        CapacityReservationId: `cr-${slug(key)}`,
        OwnerId: ACCOUNT,
        State: 'active',
        Tags: tagsOf(key),
      })),
      { CapacityReservationId: 'cr-plain', OwnerId: ACCOUNT, State: 'active' },
    ],
  },
  ssm: { parameters: { constructor: 'ami-0000000000000000' } },
  eks: {
    clusters: [
      {
        name: 'demo',
        // A literal `{ __proto__: … }` would set the prototype; fromEntries defines the key.
        tags: Object.fromEntries([['__proto__', 'x']]),
        kubernetes: {
          ec2NodeClasses: KEYS.map((key) => ({
            apiVersion: 'karpenter.k8s.aws/v1',
            kind: 'EC2NodeClass',
            metadata: { name: slug(key) },
            spec: {
              role: 'KarpenterNodeRole-demo',
              subnetSelectorTerms: [{ tags: { [key]: 'x' } }],
              securityGroupSelectorTerms: [{ tags: { [key]: 'x' } }],
              amiSelectorTerms: [{ tags: { [key]: 'x' }, owner: 'self' }],
              capacityReservationSelectorTerms: [{ tags: { [key]: 'x' } }],
            },
          })),
        },
      },
    ],
  },
});

async function worldNodeClasses(): Promise<Map<string, EC2NodeClass>> {
  const world = parseWorld(WORLD_TEXT, 'world.json');
  const loaded = await createWorldObjectSource({ world, file: 'world.json' }).load();
  expect(loaded.inputErrors).toEqual([]);
  return new Map(
    loaded.nodeClasses.map((entry) => {
      if (!entry.parsed.ok) throw new Error(JSON.stringify(entry.parsed.issues));
      return [entry.name, entry.parsed.value];
    })
  );
}

describe('special tag keys in a world file', () => {
  it('writes __proto__ into the world text as a key (the fixture is what a file would hold)', () => {
    expect(WORLD_TEXT).toContain('"tags":{"__proto__":"x"}');
    expect(WORLD_TEXT).toContain('{"Key":"__proto__","Value":"x"}');
  });

  it.each(KEYS)('answers selectors on %s with exactly the resources carrying it', async (key) => {
    // Prepare
    const world = parseWorld(WORLD_TEXT, 'world.json');
    const facts = createWorldAwsFacts({ world, now: NOW });
    const nodeClass = (await worldNodeClasses()).get(slug(key));
    if (nodeClass === undefined) throw new Error(`no NodeClass ${slug(key)}`);
    const { spec } = nodeClass;
    const [subnetQuery] = subnetQueries(spec.subnetSelectorTerms);
    const [groupQuery] = securityGroupQueries(spec.securityGroupSelectorTerms);
    const [reservationQuery] = capacityReservationQueries(
      spec.capacityReservationSelectorTerms ?? []
    );
    const [amiTerm] = spec.amiSelectorTerms;
    if (!subnetQuery || !groupQuery || !reservationQuery || !amiTerm) throw new Error('no query');

    // Act
    const subnets = await facts.describeSubnets(subnetQuery);
    const groups = await facts.describeSecurityGroups(groupQuery);
    const images = await facts.describeImages(termImageQuery(amiTerm));
    const reservations = await facts.describeCapacityReservations(reservationQuery);

    // Assess
    expect(subnetQuery.filters).toEqual([{ name: `tag:${key}`, values: ['x'] }]);
    expect(subnets.map((subnet) => subnet.id)).toEqual([`subnet-${slug(key)}`]);
    expect(groups.map((group) => group.id)).toEqual([`sg-${slug(key)}`]);
    expect(images.map((image) => image.tags.Name)).toEqual([slug(key)]);
    expect(reservations.map((reservation) => reservation.id)).toEqual([`cr-${slug(key)}`]);
  });

  it('reads SSM parameters and cluster tags by own key only', async () => {
    const world = parseWorld(WORLD_TEXT, 'world.json');
    const facts = createWorldAwsFacts({ world, now: NOW });
    expect(await facts.getParameter('constructor')).toBe('ami-0000000000000000');
    expect(await facts.getParameter('toString')).toBeUndefined();
    expect(await facts.getParameter('__proto__')).toBeUndefined();
    expect(Object.entries(world.eks.clusters[0]?.tags ?? {})).toEqual([['__proto__', 'x']]);
  });
});
