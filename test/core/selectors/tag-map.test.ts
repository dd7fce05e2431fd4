// Tag keys that are special to JavaScript objects are ordinary tag keys to EC2.
import { describe, expect, it } from 'vitest';
import {
  imageMatchesQuery,
  imageMatchesTerm,
  termImageQuery,
} from '../../../lambda/core/ami/queries.js';
import type { Tags } from '../../../lambda/core/facts/aws.js';
import { type EC2NodeClass, parseEC2NodeClass } from '../../../lambda/core/schema.js';
import {
  capacityReservationMatchesQuery,
  capacityReservationMatchesTerm,
  capacityReservationQueries,
} from '../../../lambda/core/selectors/capacity-reservations.js';
import { matchesFilters, tagsMatchTerm } from '../../../lambda/core/selectors/ec2-filter.js';
import {
  securityGroupMatchesQuery,
  securityGroupMatchesTerm,
  securityGroupQueries,
} from '../../../lambda/core/selectors/security-groups.js';
import {
  subnetMatchesQuery,
  subnetMatchesTerm,
  subnetQueries,
} from '../../../lambda/core/selectors/subnets.js';
import { StringMapSchema, tagMapOf, tagValue } from '../../../lambda/core/selectors/tag-map.js';
import {
  ACCOUNT,
  aCapacityReservation,
  anImage,
  aSecurityGroup,
  aSubnet,
} from '../../support/aws-builders.js';

const SPECIAL_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];

/** A NodeClass whose every selector selects `key=value`, parsed from JSON text as a file would be. */
function nodeClassSelecting(key: string, value: string): EC2NodeClass {
  const tags = `{${JSON.stringify(key)}: ${JSON.stringify(value)}}`;
  const parsed = parseEC2NodeClass(
    JSON.parse(`{
      "apiVersion": "karpenter.k8s.aws/v1",
      "kind": "EC2NodeClass",
      "metadata": { "name": "special" },
      "spec": {
        "role": "KarpenterNodeRole-demo",
        "subnetSelectorTerms": [{ "tags": ${tags} }],
        "securityGroupSelectorTerms": [{ "tags": ${tags} }],
        "amiSelectorTerms": [{ "tags": ${tags}, "owner": "self" }],
        "capacityReservationSelectorTerms": [{ "tags": ${tags} }],
        "tags": ${tags}
      }
    }`)
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.value;
}

function only<T>(items: readonly T[]): T {
  expect(items).toHaveLength(1);
  return items[0] as T;
}

describe('StringMapSchema', () => {
  it('keeps an own __proto__ key that zod’s record drops, in a null-prototype map', () => {
    const input = JSON.parse('{"__proto__": "x", "constructor": "y", "team": "a"}');
    const parsed = StringMapSchema.parse(input);
    expect(Object.keys(parsed)).toEqual(['__proto__', 'constructor', 'team']);
    expect(Object.getPrototypeOf(parsed)).toBeNull();
    expect(tagValue(parsed, '__proto__')).toBe('x');
    expect(tagValue(parsed, 'toString')).toBeUndefined();
  });

  it('rejects what zod’s record rejects, with the same paths and messages', () => {
    const issues = (input: unknown) =>
      StringMapSchema.safeParse(input).error?.issues.map((issue) => [issue.path, issue.message]);
    expect(issues('x')).toEqual([[[], 'Invalid input: expected record, received string']]);
    expect(issues(['x'])).toEqual([[[], 'Invalid input: expected record, received array']]);
    expect(issues(JSON.parse('{"__proto__": 1}'))).toEqual([
      [['__proto__'], 'Invalid input: expected string, received number'],
    ]);
  });

  it('builds own-property maps from entries and reads only own keys', () => {
    const tags = tagMapOf([
      ['__proto__', 'x'],
      ['constructor', 'y'],
    ]);
    expect(Object.keys(tags)).toEqual(['__proto__', 'constructor']);
    expect(tagValue(tags, '__proto__')).toBe('x');
    expect(tagValue({}, 'constructor')).toBeUndefined();
    expect(tagValue({}, 'toString')).toBeUndefined();
  });
});

describe.each(SPECIAL_KEYS)('selector tag key %s', (key) => {
  const nodeClass = nodeClassSelecting(key, 'x');
  const { spec } = nodeClass;
  const carrying: Tags = tagMapOf([[key, 'x']]);
  const otherValue: Tags = tagMapOf([[key, 'y']]);
  // Plain objects, as a builder or an SDK response may produce: inherited members are no tags.
  const untagged: Tags = {};
  const unrelated: Tags = { Name: 'other' };

  it('survives parsing as an ordinary key of every selector and of spec.tags', () => {
    for (const tags of [
      spec.subnetSelectorTerms[0]?.tags,
      spec.securityGroupSelectorTerms[0]?.tags,
      spec.amiSelectorTerms[0]?.tags,
      spec.capacityReservationSelectorTerms?.[0]?.tags,
      spec.tags,
    ]) {
      expect(tags === undefined ? [] : Object.entries(tags)).toEqual([[key, 'x']]);
    }
  });

  it('becomes a tag:<key> filter, never an empty query', () => {
    const filter = { name: `tag:${key}`, values: ['x'] };
    expect(subnetQueries(spec.subnetSelectorTerms)).toEqual([{ filters: [filter] }]);
    expect(securityGroupQueries(spec.securityGroupSelectorTerms)).toEqual([{ filters: [filter] }]);
    expect(termImageQuery(only(spec.amiSelectorTerms)).filters).toContainEqual(filter);
    expect(
      capacityReservationQueries(spec.capacityReservationSelectorTerms ?? [])[0]?.filters
    ).toContainEqual(filter);
  });

  it('selects only subnets, security groups, images and reservations carrying the tag', () => {
    const subnetTerm = only(spec.subnetSelectorTerms);
    const subnetQuery = only(subnetQueries(spec.subnetSelectorTerms));
    const groupTerm = only(spec.securityGroupSelectorTerms);
    const groupQuery = only(securityGroupQueries(spec.securityGroupSelectorTerms));
    const amiTerm = only(spec.amiSelectorTerms);
    const reservationTerm = only(spec.capacityReservationSelectorTerms ?? []);
    const reservationQuery = only(capacityReservationQueries([reservationTerm]));
    const verdicts = [carrying, otherValue, untagged, unrelated].map((tags) => {
      const subnet = aSubnet({ tags });
      const group = aSecurityGroup({ tags });
      const image = anImage({ ownerId: ACCOUNT, tags });
      const reservation = aCapacityReservation({ tags });
      return [
        subnetMatchesTerm(subnet, subnetTerm),
        subnetMatchesQuery(subnet, subnetQuery),
        securityGroupMatchesTerm(group, groupTerm),
        securityGroupMatchesQuery(group, groupQuery),
        imageMatchesTerm(image, amiTerm, { accountId: ACCOUNT }),
        imageMatchesQuery(image, termImageQuery(amiTerm), { accountId: ACCOUNT }),
        capacityReservationMatchesTerm(reservation, reservationTerm),
        capacityReservationMatchesQuery(reservation, reservationQuery),
      ];
    });
    expect(verdicts).toEqual([
      Array(8).fill(true),
      Array(8).fill(false),
      Array(8).fill(false),
      Array(8).fill(false),
    ]);
  });

  it('does not find an inherited member through a value wildcard or a tag-key term', () => {
    for (const resourceTags of [untagged, unrelated]) {
      expect(tagsMatchTerm(resourceTags, tagMapOf([[key, '?*']]))).toBe(false);
      expect(tagsMatchTerm(resourceTags, tagMapOf([[key, '*']]))).toBe(false);
      expect(
        matchesFilters('subnets', [{ name: `tag:${key}`, values: ['*'] }], resourceTags, () => [])
      ).toBe(false);
    }
    expect(tagsMatchTerm(carrying, tagMapOf([[key, '*']]))).toBe(true);
    expect(
      matchesFilters('subnets', [{ name: 'tag-key', values: [key] }], carrying, () => [])
    ).toBe(true);
  });
});
