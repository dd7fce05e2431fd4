import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  changeBetween,
  materialFacts,
  materialHash,
  selectMaterial,
} from '../../lambda/core/material.js';
import { type Finding, stableHash } from '../../lambda/core/model.js';

type Material = Pick<Finding, 'status' | 'severity' | 'evidence'>;

const failing = (evidence: Record<string, unknown>): Material => ({
  status: 'fail',
  severity: 'high',
  evidence,
});

describe('selectMaterial', () => {
  const evidence = {
    threshold: 16,
    subnets: [
      { id: 'subnet-a', free: 3 },
      { id: 'subnet-b', free: 0 },
    ],
    role: 'KarpenterNodeRole',
  };

  it('takes the whole value of a key', () => {
    expect(selectMaterial(evidence, 'role')).toBe('KarpenterNodeRole');
    expect(selectMaterial(evidence, 'subnets')).toEqual(evidence.subnets);
  });

  it('takes one field of every item with key[].field', () => {
    expect(selectMaterial(evidence, 'subnets[].id')).toEqual(['subnet-a', 'subnet-b']);
  });

  it('selects nothing for an absent key, a field of a non-array, or an inherited property', () => {
    expect(selectMaterial(evidence, 'missing')).toBeUndefined();
    expect(selectMaterial(evidence, 'role[].id')).toBeUndefined();
    expect(selectMaterial(evidence, 'toString')).toBeUndefined();
    expect(selectMaterial(evidence, 'subnets[].constructor')).toEqual([undefined, undefined]);
  });
});

describe('materialFacts', () => {
  it('compares arrays as sets: order and repetition do not matter', () => {
    const a = failing({ images: [{ id: 'ami-1' }, { id: 'ami-2' }] });
    const b = failing({ images: [{ id: 'ami-2' }, { id: 'ami-1' }, { id: 'ami-2' }] });

    expect(materialFacts(a, ['images[].id'])).toEqual(materialFacts(b, ['images[].id']));
    expect(materialFacts(a, ['images'])).toEqual(materialFacts(b, ['images']));
  });

  it('ignores object key order and undefined fields', () => {
    const a = failing({ vpcs: { 'vpc-1': ['sg-1'], 'vpc-2': ['subnet-1'] }, note: undefined });
    const b = failing({ vpcs: { 'vpc-2': ['subnet-1'], 'vpc-1': ['sg-1'] } });

    expect(materialHash(a, ['vpcs', 'note'])).toBe(materialHash(b, ['vpcs', 'note']));
  });

  it('holds status, severity and only the declared paths', () => {
    const facts = materialFacts(failing({ subnets: [{ id: 'subnet-a', free: 3 }], n: 1 }), [
      'subnets[].id',
    ]);

    expect(facts).toMatchObject({ status: 'fail', severity: 'high' });
    expect(Object.keys((facts as { evidence: object }).evidence)).toEqual(['subnets[].id']);
    expect(JSON.stringify(facts)).toContain('subnet-a');
    expect(JSON.stringify(facts)).not.toMatch(/free|"n"/);
  });
});

describe('materialHash', () => {
  const paths = ['subnets[].id'];

  it('does not change with evidence outside the declared paths', () => {
    const before = failing({ subnets: [{ id: 'subnet-a', free: 3 }], threshold: 16 });
    const after = failing({ subnets: [{ id: 'subnet-a', free: 4 }], threshold: 32 });

    expect(materialHash(after, paths)).toBe(materialHash(before, paths));
  });

  it('changes with a declared path', () => {
    const before = failing({ subnets: [{ id: 'subnet-a', free: 3 }] });
    const after = failing({ subnets: [{ id: 'subnet-a' }, { id: 'subnet-b' }] });

    expect(materialHash(after, paths)).not.toBe(materialHash(before, paths));
  });

  it('changes with status or severity even when no evidence is material', () => {
    const base = failing({ reason: 'x' });

    expect(materialHash({ ...base, severity: 'medium' }, [])).not.toBe(materialHash(base, []));
    expect(materialHash({ ...base, status: 'error' }, [])).not.toBe(materialHash(base, []));
    expect(materialHash(failing({ reason: 'y' }), [])).toBe(materialHash(base, []));
  });

  it('tells an absent path from an empty one', () => {
    expect(materialHash(failing({ missing: [] }), ['missing'])).not.toBe(
      materialHash(failing({}), ['missing'])
    );
  });
});

describe('changeBetween', () => {
  const current = { materialHash: 'h1', severity: 'high', status: 'fail' } as const;

  it('is new without a previous record', () => {
    expect(changeBetween(undefined, current)).toBe('new');
  });

  it('compares material hashes when the previous record has one', () => {
    expect(changeBetween({ ...current }, current)).toBe('unchanged');
    expect(changeBetween({ ...current, materialHash: 'h0' }, current)).toBe('changed');
  });

  it('decides by the hash alone, not by severity or status fields beside it', () => {
    // The hash covers severity and status; a record is never compared field by field then.
    expect(changeBetween({ materialHash: 'h1', severity: 'low', status: 'error' }, current)).toBe(
      'unchanged'
    );
  });

  it('falls back to severity and status for records written before hashes existed', () => {
    expect(changeBetween({ severity: 'high', status: 'fail' }, current)).toBe('unchanged');
    expect(changeBetween({ severity: 'medium', status: 'fail' }, current)).toBe('changed');
    expect(changeBetween({ severity: 'high', status: 'error' }, current)).toBe('changed');
  });
});

describe('materialHash as written', () => {
  // The hash was always stableHash(JSON.stringify(materialFacts(…))): written directly now, it
  // must stay the same for every finding already stored.
  const written = (material: Material, paths: readonly string[]) =>
    stableHash(JSON.stringify(materialFacts(material, paths)));

  it('is the hash of the canonical facts as JSON, for any evidence', () => {
    const key = fc.oneof(
      fc.string({ maxLength: 6 }),
      fc.constantFrom('0', '1', '10', '9', '01', '-1', '4294967294', '4294967295', 'toJSON')
    );
    const value = fc.letrec((tie) => ({
      leaf: fc.oneof(
        fc.string({ unit: 'binary', maxLength: 8 }),
        fc.double(),
        fc.boolean(),
        fc.constant(null),
        fc.constant(undefined)
      ),
      node: fc.oneof(
        { depthSize: 'small' },
        tie('leaf'),
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(key, tie('node'), { maxKeys: 4 })
      ),
    })).node;
    fc.assert(
      fc.property(fc.dictionary(key, value, { maxKeys: 5 }), (evidence) => {
        const paths = [...Object.keys(evidence), 'absent', 'items[].name'];
        expect(materialHash(failing(evidence), paths)).toBe(written(failing(evidence), paths));
      }),
      { numRuns: 300 }
    );
  });

  it('writes values a check never produces the long way, with the same result', () => {
    const evidence = {
      when: new Date(0),
      seen: new Map([['a', 1]]),
      odd: { toJSON: () => 'replaced', kept: 1 },
      unset: [1, undefined, 3],
    };
    const paths = Object.keys(evidence);
    expect(materialHash(failing(evidence), paths)).toBe(written(failing(evidence), paths));
    expect(() => materialHash(failing({ big: 1n }), ['big'])).toThrow(TypeError);
  });
});
