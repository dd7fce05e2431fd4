import { describe, expect, it } from 'vitest';
import {
  admittedValues,
  intersectRequirements,
  keyRequirement,
  keyRequirementText,
  labelAdmits,
  labelValueSet,
  nodePoolRequirements,
  operatorOf,
  requirementAdmitsValues,
} from '../../lambda/core/nodepool-requirements.js';
import { type NodeSelectorRequirement, parseNodePool } from '../../lambda/core/schema.js';

const ARCH = 'kubernetes.io/arch';
const GEN = 'karpenter.k8s.aws/instance-generation';
const r = (key: string, operator: string, values?: string[]): NodeSelectorRequirement => ({
  key,
  operator,
  ...(values ? { values } : {}),
});

describe('NodePool requirements', () => {
  it('reads spec.template.spec.requirements of a parsed NodePool', () => {
    const parsed = parseNodePool({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'a' },
      spec: {
        template: {
          spec: {
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
            requirements: [r(ARCH, 'In', ['arm64'])],
          },
        },
      },
    });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    expect(nodePoolRequirements(parsed.value)).toEqual([r(ARCH, 'In', ['arm64'])]);
  });

  it.each([
    ['no requirement', [], ['amd64', 'arm64'], true],
    ['In', [r(ARCH, 'In', ['arm64'])], ['arm64'], false],
    ['NotIn', [r(ARCH, 'NotIn', ['arm64'])], ['amd64'], true],
    ['Exists', [r(ARCH, 'Exists')], ['amd64', 'arm64'], false],
    ['DoesNotExist', [r(ARCH, 'DoesNotExist')], [], true],
    [
      'In and NotIn ANDed',
      [r(ARCH, 'In', ['arm64', 'amd64']), r(ARCH, 'NotIn', ['amd64'])],
      ['arm64'],
      false,
    ],
    [
      'a requirement on another key',
      [r('kubernetes.io/os', 'In', ['linux'])],
      ['amd64', 'arm64'],
      true,
    ],
  ] as const)('%s', (_label, requirements, admitted, absent) => {
    expect(admittedValues(requirements, ARCH, ['amd64', 'arm64'])).toEqual(admitted);
    expect(labelAdmits(requirements, ARCH, undefined)).toBe(absent);
  });

  it('compares Gt/Gte/Lt/Lte as integers', () => {
    const requirements = [r(GEN, 'Gt', ['4']), r(GEN, 'Lte', ['7'])];
    expect(admittedValues(requirements, GEN, ['3', '4', '5', '7', '8', 'x'])).toEqual(['5', '7']);
    expect(labelValueSet(requirements, GEN)).toMatchObject({
      constrained: true,
      greaterThan: 4,
      lessThan: 8,
      allowsAbsent: false,
      allowsSomeValue: true,
    });
  });

  it('describes the value set of a key', () => {
    expect(
      labelValueSet([r(ARCH, 'In', ['arm64', 'amd64']), r(ARCH, 'NotIn', ['amd64'])], ARCH)
    ).toEqual({
      key: ARCH,
      constrained: true,
      values: new Set(['arm64']),
      excluded: new Set(['amd64']),
      allowsAbsent: false,
      allowsSomeValue: true,
    });
    expect(labelValueSet([], ARCH)).toMatchObject({
      constrained: false,
      allowsAbsent: true,
      allowsSomeValue: true,
    });
    expect(labelValueSet([r(ARCH, 'DoesNotExist')], ARCH)).toMatchObject({
      allowsAbsent: true,
      allowsSomeValue: false,
    });
  });

  it('finds contradictions: disjoint In lists, and bounds that leave no integer', () => {
    const disjoint = [r(ARCH, 'In', ['amd64']), r(ARCH, 'In', ['arm64'])];
    expect(labelValueSet(disjoint, ARCH)).toMatchObject({
      values: new Set(),
      allowsSomeValue: false,
    });
    const empty = [r(GEN, 'Gt', ['5']), r(GEN, 'Lt', ['6'])];
    expect(labelValueSet(empty, GEN).allowsSomeValue).toBe(false);
  });
});

describe("Karpenter's requirement algebra", () => {
  const key = 'karpenter.k8s.aws/instance-generation';
  const admits = (operators: [string, string[]][], values: string[]) =>
    requirementAdmitsValues(
      operators
        .map(([operator, list]) => keyRequirement(key, operator, list))
        .reduce((a, b) => intersectRequirements(b, a)),
      values
    );

  it('admits a value or an absent label as In, NotIn, Exists and DoesNotExist do', () => {
    expect(admits([['In', ['6', '7']]], ['7'])).toBe(true);
    expect(admits([['In', ['6', '7']]], [])).toBe(false);
    expect(admits([['NotIn', ['6']]], ['6'])).toBe(false);
    expect(admits([['NotIn', ['6']]], [])).toBe(true);
    expect(admits([['Exists', []]], [])).toBe(false);
    expect(admits([['Exists', []]], ['1'])).toBe(true);
    expect(admits([['DoesNotExist', []]], [])).toBe(true);
    expect(admits([['DoesNotExist', []]], ['1'])).toBe(false);
  });

  it('bounds integers with Gt, Lt, Gte and Lte, never non-integers or an absent label', () => {
    expect(admits([['Gt', ['6']]], ['7'])).toBe(true);
    expect(admits([['Gt', ['6']]], ['6'])).toBe(false);
    expect(admits([['Gte', ['6']]], ['6'])).toBe(true);
    expect(admits([['Lt', ['6']]], ['6'])).toBe(false);
    expect(admits([['Lte', ['6']]], ['6'])).toBe(true);
    expect(admits([['Gt', ['6']]], ['x'])).toBe(false);
    expect(admits([['Gt', ['6']]], [])).toBe(false);
    expect(
      admits(
        [
          ['Gt', ['6']],
          ['Lt', ['7']],
        ],
        ['7']
      )
    ).toBe(false);
  });

  it('intersects several requirements on one key, bounds on a concrete set included', () => {
    const combined = intersectRequirements(
      keyRequirement(key, 'Gt', ['6']),
      keyRequirement(key, 'In', ['5', '7', '8'])
    );
    expect(operatorOf(combined)).toBe('In');
    expect([...combined.values].sort()).toEqual(['7', '8']);
    expect(combined.gte).toBeUndefined();
    // Contradictory bounds leave nothing (DoesNotExist), which an absent label satisfies.
    const none = intersectRequirements(
      keyRequirement(key, 'Gt', ['8']),
      keyRequirement(key, 'Lt', ['5'])
    );
    expect(operatorOf(none)).toBe('DoesNotExist');
    // Karpenter's quirk: NotIn with a bound reads as NotIn, which an absent label satisfies
    // (a NotIn value outside the bound is dropped, leaving Exists).
    expect(
      admits(
        [
          ['NotIn', ['3']],
          ['Gt', ['6']],
        ],
        []
      )
    ).toBe(false);
    expect(
      admits(
        [
          ['NotIn', ['8']],
          ['Gt', ['6']],
        ],
        []
      )
    ).toBe(true);
    expect(
      keyRequirementText(
        intersectRequirements(keyRequirement(key, 'NotIn', ['8']), keyRequirement(key, 'Gt', ['6']))
      )
    ).toBe(`${key} NotIn [8] >=7`);
  });

  it('keeps the largest minValues of the requirements it combines', () => {
    const combined = intersectRequirements(
      keyRequirement(key, 'Exists', [], 3),
      keyRequirement(key, 'NotIn', ['1'], 5)
    );
    expect(combined.minValues).toBe(5);
  });

  it('matches any of several values (multi-valued labels such as tenancy)', () => {
    const tenancy = keyRequirement('karpenter.k8s.aws/instance-tenancy', 'In', ['dedicated']);
    expect(requirementAdmitsValues(tenancy, ['default', 'dedicated'])).toBe(true);
  });
});
