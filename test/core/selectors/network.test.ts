import { describe, expect, it } from 'vitest';
import {
  capacityReservationMatchesQuery,
  capacityReservationMatchesTerm,
  capacityReservationQueries,
} from '../../../lambda/core/selectors/capacity-reservations.js';
import {
  securityGroupMatchesQuery,
  securityGroupMatchesTerm,
  securityGroupQueries,
} from '../../../lambda/core/selectors/security-groups.js';
import {
  sortSubnets,
  subnetMatchesQuery,
  subnetMatchesTerm,
  subnetQueries,
} from '../../../lambda/core/selectors/subnets.js';
import { aCapacityReservation, aSecurityGroup, aSubnet } from '../../support/aws-builders.js';

function firstOf<T>(items: readonly T[]): T {
  const [item] = items;
  if (item === undefined) throw new Error('expected one query');
  return item;
}

describe('subnet queries', () => {
  it('issues one query per tag term and batches ids into one subnet-id filter, without VPC filter', () => {
    const queries = subnetQueries([
      { tags: { 'karpenter.sh/discovery': 'demo' } },
      { id: 'subnet-0a' },
      { tags: { tier: '*' } },
      { id: 'subnet-0b' },
    ]);
    expect(queries).toEqual([
      { filters: [{ name: 'tag:karpenter.sh/discovery', values: ['demo'] }] },
      { filters: [{ name: 'tag-key', values: ['tier'] }] },
      { filters: [{ name: 'subnet-id', values: ['subnet-0a', 'subnet-0b'] }] },
    ]);
  });

  it('matches a query and a term the same way', () => {
    const subnet = aSubnet({ id: 'subnet-0a', tags: { tier: 'private' } });
    const terms = [{ id: 'subnet-0a' }, { tags: { tier: 'priv*' } }, { tags: { tier: 'public' } }];
    for (const term of terms) {
      const query = firstOf(subnetQueries([term]));
      expect(subnetMatchesQuery(subnet, query)).toBe(subnetMatchesTerm(subnet, term));
    }
  });

  it("sorts like Karpenter's status: most free IPs first, then id", () => {
    const sorted = sortSubnets([
      aSubnet({ id: 'subnet-b', availableIpAddressCount: 10 }),
      aSubnet({ id: 'subnet-c', availableIpAddressCount: 99 }),
      aSubnet({ id: 'subnet-a', availableIpAddressCount: 10 }),
    ]);
    expect(sorted.map((subnet) => subnet.id)).toEqual(['subnet-c', 'subnet-a', 'subnet-b']);
  });
});

describe('security group queries', () => {
  it('batches ids into group-id and names into group-name, tags one query each', () => {
    expect(
      securityGroupQueries([{ name: 'a' }, { id: 'sg-1' }, { tags: { k: 'v' } }, { name: 'b' }])
    ).toEqual([
      { filters: [{ name: 'tag:k', values: ['v'] }] },
      { filters: [{ name: 'group-id', values: ['sg-1'] }] },
      { filters: [{ name: 'group-name', values: ['a', 'b'] }] },
    ]);
  });

  it('matches group-name against the GroupName, not the Name tag', () => {
    const group = aSecurityGroup({ name: 'nodes', tags: { Name: 'other' } });
    const query = firstOf(securityGroupQueries([{ name: 'other' }]));
    expect(securityGroupMatchesQuery(group, query)).toBe(false);
    expect(securityGroupMatchesTerm(group, { name: 'nodes' })).toBe(true);
  });
});

describe('capacity reservation queries', () => {
  it('always filters state=active; ids by CapacityReservationIds; criteria and owner as filters', () => {
    expect(
      capacityReservationQueries([
        { id: 'cr-1' },
        { ownerID: '111122223333', tags: { team: 'ml' }, instanceMatchCriteria: 'targeted' },
      ])
    ).toEqual([
      { filters: [{ name: 'state', values: ['active'] }], ids: ['cr-1'] },
      {
        filters: [
          { name: 'state', values: ['active'] },
          { name: 'owner-id', values: ['111122223333'] },
          { name: 'tag:team', values: ['ml'] },
          { name: 'instance-match-criteria', values: ['targeted'] },
        ],
      },
    ]);
  });

  it('matches queries and terms consistently', () => {
    const reservation = aCapacityReservation();
    const term = { tags: { team: 'ml' }, instanceMatchCriteria: 'targeted' };
    const query = firstOf(capacityReservationQueries([term]));
    expect(capacityReservationMatchesQuery(reservation, query)).toBe(true);
    expect(capacityReservationMatchesTerm(reservation, term)).toBe(true);
    expect(capacityReservationMatchesQuery({ ...reservation, state: 'expired' }, query)).toBe(
      false
    );
    expect(
      capacityReservationMatchesTerm(reservation, { ownerID: '999999999999', tags: { team: 'ml' } })
    ).toBe(false);
  });
});
