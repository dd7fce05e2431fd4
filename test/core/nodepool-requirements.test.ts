import { describe, expect, it } from 'vitest';
import {
  admittedValues,
  labelAdmits,
  labelValueSet,
  nodePoolRequirements,
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
