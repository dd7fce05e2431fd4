import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  aliasImageQuery,
  applyStateFilters,
  imageMatchesQuery,
  imageMatchesTerm,
  imageQueriesForTerms,
  termImageQuery,
  withoutStateFilter,
} from '../../../lambda/core/ami/queries.js';
import type { Image } from '../../../lambda/core/facts/aws.js';
import type { AmiSelectorTerm } from '../../../lambda/core/schema.js';
import { ACCOUNT, anImage } from '../../support/aws-builders.js';

const context = { accountId: ACCOUNT };

describe('imageQueriesForTerms', () => {
  it("builds Karpenter's queries: one per name/tags term, ids batched last, state and IncludeDeprecated always", () => {
    const plans = imageQueriesForTerms([
      { name: 'team-node-*' },
      { id: 'ami-0a' },
      { tags: { team: 'a', role: '*' } },
      { name: 'x', owner: '099720109477' },
      { id: 'ami-0b' },
    ]);
    expect(plans).toEqual([
      {
        query: {
          filters: [
            { name: 'name', values: ['team-node-*'] },
            { name: 'state', values: ['available'] },
          ],
          owners: ['self', 'amazon'],
          includeDeprecated: true,
        },
        termIndexes: [0],
      },
      {
        query: {
          filters: [
            { name: 'tag-key', values: ['role'] },
            { name: 'tag:team', values: ['a'] },
            { name: 'state', values: ['available'] },
          ],
          includeDeprecated: true,
        },
        termIndexes: [2],
      },
      {
        query: {
          filters: [
            { name: 'name', values: ['x'] },
            { name: 'state', values: ['available'] },
          ],
          owners: ['099720109477'],
          includeDeprecated: true,
        },
        termIndexes: [3],
      },
      {
        query: {
          filters: [
            { name: 'image-id', values: ['ami-0a', 'ami-0b'] },
            { name: 'state', values: ['available'] },
          ],
          includeDeprecated: true,
        },
        termIndexes: [1, 4],
      },
    ]);
  });

  it('adds resolved ssmParameter values to the id query and skips missing or non-ami values', () => {
    const plans = imageQueriesForTerms(
      [{ ssmParameter: '/a' }, { ssmParameter: '/b' }, { ssmParameter: '/c' }, { id: 'ami-0z' }],
      new Map([
        [0, 'ami-0ssm'],
        [1, 'not-an-ami'],
      ])
    );
    expect(plans).toHaveLength(1);
    expect(plans[0]?.query.filters[0]).toEqual({
      name: 'image-id',
      values: ['ami-0ssm', 'ami-0z'],
    });
    expect(plans[0]?.termIndexes).toEqual([0, 3]);
  });

  it('sends no query when no term yields one', () => {
    expect(imageQueriesForTerms([{ ssmParameter: '/missing' }])).toEqual([]);
  });

  it('makes one image-id query of an alias with the variants per id', () => {
    const plan = aliasImageQuery(
      [
        { imageId: 'ami-std', variants: ['standard'] },
        { imageId: 'ami-gpu', variants: ['nvidia'] },
        { imageId: 'ami-gpu', variants: ['neuron'] },
      ],
      0
    );
    expect(plan?.query.filters[0]).toEqual({ name: 'image-id', values: ['ami-std', 'ami-gpu'] });
    expect(plan?.knownVariants).toEqual({
      'ami-std': ['standard'],
      'ami-gpu': ['nvidia', 'neuron'],
    });
    expect(aliasImageQuery([], 0)).toBeUndefined();
  });

  it('removes only the state filter for the stateless variant', () => {
    const query = termImageQuery({ name: 'n' });
    expect(withoutStateFilter(query)).toEqual({
      filters: [{ name: 'name', values: ['n'] }],
      owners: ['self', 'amazon'],
      includeDeprecated: true,
    });
  });
});

describe('imageMatchesQuery', () => {
  it('applies owners: self is the caller account, amazon the owner alias', () => {
    const query = termImageQuery({ name: 'al2023-*' });
    expect(imageMatchesQuery(anImage({ name: 'al2023-x' }), query, context)).toBe(true);
    expect(
      imageMatchesQuery(anImage({ name: 'al2023-x', ownerId: '999988887777' }), query, context)
    ).toBe(false);
    expect(
      imageMatchesQuery(
        anImage({ name: 'al2023-x', ownerId: '137112412989', ownerAlias: 'amazon' }),
        query,
        context
      )
    ).toBe(true);
  });

  it('never lists disabled images and honours the state filter', () => {
    const query = termImageQuery({ tags: { team: 'a' } });
    const image = anImage({ tags: { team: 'a' } });
    expect(imageMatchesQuery(image, query, context)).toBe(true);
    expect(imageMatchesQuery({ ...image, state: 'pending' }, query, context)).toBe(false);
    expect(
      imageMatchesQuery({ ...image, state: 'pending' }, withoutStateFilter(query), context)
    ).toBe(true);
    expect(
      imageMatchesQuery({ ...image, state: 'disabled' }, withoutStateFilter(query), context)
    ).toBe(false);
  });

  it("hides others' deprecated images without includeDeprecated", () => {
    const now = new Date('2026-11-01T00:00:00Z');
    const query = { filters: [], includeDeprecated: false };
    const deprecated = anImage({
      ownerId: '999988887777',
      deprecationTime: '2026-01-01T00:00:00Z',
    });
    expect(imageMatchesQuery(deprecated, query, { ...context, now })).toBe(false);
    expect(imageMatchesQuery({ ...deprecated, ownerId: ACCOUNT }, query, { ...context, now })).toBe(
      true
    );
  });
});

describe('imageMatchesTerm agrees with the query semantics', () => {
  const alphabet = ['a', 'b', 'A', '-', '.', '*', '?'];
  const text = fc
    .array(fc.constantFrom(...alphabet.filter((char) => char !== '*' && char !== '?')), {
      maxLength: 6,
    })
    .map((chars) => chars.join(''));
  const pattern = fc
    .array(fc.constantFrom(...alphabet), { maxLength: 6 })
    .map((chars) => chars.join(''));
  const tagKey = fc.constantFrom('team', 'env', 'Team', 'karpenter.sh/discovery');
  const owners = [ACCOUNT, '999988887777', '137112412989'];

  const image = fc.record({
    name: fc.option(text, { nil: undefined }),
    ownerId: fc.constantFrom(...owners),
    ownerAlias: fc.option(fc.constantFrom('amazon', 'aws-marketplace'), { nil: undefined }),
    state: fc.constantFrom('available', 'pending', 'failed', 'deregistered', 'disabled'),
    tags: fc.dictionary(tagKey, text, { maxKeys: 3 }),
    id: fc.constantFrom('ami-0a', 'ami-0b', 'ami-1a'),
  });
  // anImage() with the generated fields; a generated undefined name or alias leaves it absent.
  const candidateOf = ({
    name,
    ownerAlias,
    ...generated
  }: typeof image extends fc.Arbitrary<infer T> ? T : never): Image => {
    const { name: _name, ownerAlias: _ownerAlias, ...base } = anImage();
    return {
      ...base,
      ...generated,
      ...(name === undefined ? {} : { name }),
      ...(ownerAlias === undefined ? {} : { ownerAlias }),
    };
  };
  const term: fc.Arbitrary<AmiSelectorTerm> = fc.oneof(
    fc.record({ id: fc.constantFrom('ami-0a', 'ami-0?', 'ami-*', 'ami-1a') }),
    fc
      .record(
        {
          name: pattern.filter((value) => value !== ''),
          owner: fc.constantFrom(...owners, 'self', 'amazon', 'aws-marketplace'),
          tags: fc.dictionary(
            tagKey,
            fc.oneof(
              pattern.filter((value) => value !== ''),
              fc.constant('*')
            ),
            {
              minKeys: 1,
              maxKeys: 2,
            }
          ),
        },
        { requiredKeys: [] }
      )
      .filter((value) => value.name !== undefined || value.tags !== undefined)
  );

  it('for every image DescribeImages lists, with and without the state filter', () => {
    fc.assert(
      fc.property(image, term, (raw, selector) => {
        const candidate = candidateOf(raw);
        const [plan] = imageQueriesForTerms([selector]);
        if (!plan) return false;
        const listed = candidate.state !== 'disabled';
        const byTerm = imageMatchesTerm(candidate, selector, context);
        expect(imageMatchesQuery(candidate, withoutStateFilter(plan.query), context)).toBe(
          byTerm && listed
        );
        expect(imageMatchesQuery(candidate, plan.query, context)).toBe(
          byTerm && candidate.state === 'available'
        );
        return true;
      }),
      { numRuns: 2000 }
    );
  });

  it('the state filter applied locally to the unfiltered answer equals the filtered answer', () => {
    fc.assert(
      fc.property(fc.array(image, { maxLength: 6 }), term, (raws, selector) => {
        const candidates = raws.map(candidateOf);
        const [plan] = imageQueriesForTerms([selector]);
        if (!plan) return false;
        const unfiltered = candidates.filter((candidate) =>
          imageMatchesQuery(candidate, withoutStateFilter(plan.query), context)
        );
        const filtered = candidates.filter((candidate) =>
          imageMatchesQuery(candidate, plan.query, context)
        );
        expect(applyStateFilters(unfiltered, plan.query)).toEqual(filtered);
        return true;
      }),
      { numRuns: 1000 }
    );
  });

  it('uses the resolved ids for alias and ssmParameter terms', () => {
    const resolvedImageIds = new Set(['ami-0a']);
    expect(
      imageMatchesTerm(anImage({ id: 'ami-0a' }), { alias: 'al2023@latest' }, { resolvedImageIds })
    ).toBe(true);
    expect(
      imageMatchesTerm(anImage({ id: 'ami-0b' }), { ssmParameter: '/x' }, { resolvedImageIds })
    ).toBe(false);
    expect(imageMatchesTerm(anImage({ id: 'ami-0a' }), { alias: 'al2023@latest' })).toBe(false);
  });
});
