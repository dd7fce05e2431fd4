import { describe, expect, it } from 'vitest';
import {
  contextOverridesOf,
  defineCheck,
  effectiveCluster,
  forEachNodeClass,
  KARPENTER_VERSION_ANNOTATION,
  type NodeClassTarget,
  REGION_ANNOTATION,
} from '../../lambda/core/check.js';
import { runChecks } from '../../lambda/core/evaluate.js';
import type { ClusterContext } from '../../lambda/core/inventory.js';
import { parseEC2NodeClass } from '../../lambda/core/schema.js';
import { aKarpenterVersion, aNodeClassObject, anInventory } from '../support/builders.js';

function parsed(annotations?: Record<string, string>) {
  const result = parseEC2NodeClass(aNodeClassObject({ metadata: { annotations } }));
  if (!result.ok) throw new Error('builder object must parse');
  return result.value;
}

const cluster: ClusterContext = {
  name: 'prod',
  region: 'us-east-1',
  partition: 'aws',
  karpenterVersion: aKarpenterVersion('1.10.0'),
};

/** Runs forEachNodeClass and returns what each evaluation saw. */
function targetsOf(objects: unknown[], context: Partial<ClusterContext> = cluster) {
  const seen: NodeClassTarget[] = [];
  const drafts = forEachNodeClass(anInventory(objects, { cluster: context }), (_nc, target) => {
    seen.push(target);
    return [{ status: 'pass', resource: target.resource, message: 'ok' }];
  });
  return { seen, drafts };
}

describe('per-object context annotations', () => {
  it('uses the cluster context when the object has no annotations', () => {
    const { cluster: effective, overrides } = effectiveCluster(cluster, parsed());
    expect(effective).toEqual(cluster);
    expect(overrides).toEqual([]);
  });

  it('overrides region, partition and Karpenter version from annotations', () => {
    // Act
    const { cluster: effective, overrides } = effectiveCluster(
      cluster,
      parsed({ [REGION_ANNOTATION]: 'us-isob-east-1', [KARPENTER_VERSION_ANNOTATION]: 'v1.6.2' })
    );

    // Assess
    expect(effective).toMatchObject({
      name: 'prod',
      region: 'us-isob-east-1',
      partition: 'aws-iso-b',
      karpenterVersion: { major: 1, minor: 6, patch: 2, raw: 'v1.6.2' },
    });
    expect(overrides.map((override) => override.annotation)).toEqual([
      REGION_ANNOTATION,
      KARPENTER_VERSION_ANNOTATION,
    ]);
  });

  it('ignores invalid values but reports them as invalid', () => {
    // Prepare
    const nodeClass = parsed({
      [REGION_ANNOTATION]: 'somewhere',
      [KARPENTER_VERSION_ANNOTATION]: 'latest',
    });

    // Act
    const { cluster: effective, overrides } = effectiveCluster(cluster, nodeClass);

    // Assess
    expect(effective).toEqual(cluster);
    expect(overrides).toEqual([]);
    expect(contextOverridesOf(nodeClass)).toEqual([
      { annotation: REGION_ANNOTATION, value: 'somewhere', valid: false },
      { annotation: KARPENTER_VERSION_ANNOTATION, value: 'latest', valid: false },
    ]);
  });

  it('gives each NodeClass its own effective cluster in forEachNodeClass', () => {
    // Prepare
    const iso = aNodeClassObject({
      name: 'iso',
      metadata: { annotations: { [REGION_ANNOTATION]: 'us-iso-west-1' } },
    });
    const plain = aNodeClassObject({ name: 'plain' });

    // Act
    const { seen } = targetsOf([iso, plain]);

    // Assess
    expect(seen.map((target) => [target.resource.name, target.cluster.region])).toEqual([
      ['iso', 'us-iso-west-1'],
      ['plain', 'us-east-1'],
    ]);
    expect(seen[0]?.overrides).toHaveLength(1);
    expect(seen[1]?.overrides).toEqual([]);
    expect(seen[0]?.cluster.karpenterVersion?.raw).toBe('1.10.0');
  });

  it('sets a region on a manifest scan that has none', () => {
    const object = aNodeClassObject({
      metadata: { annotations: { [REGION_ANNOTATION]: 'cn-north-1' } },
    });
    const { seen } = targetsOf([object], { name: '' });
    expect(seen[0]?.cluster).toMatchObject({ region: 'cn-north-1', partition: 'aws-cn' });
  });

  it('falls back to an unnamed context for a NodeClass of an unknown cluster', () => {
    // Prepare
    const inventory = anInventory([aNodeClassObject()], { cluster: { name: 'known' } });
    const orphan = { ...inventory, clusters: [] };
    const seen: NodeClassTarget[] = [];

    // Act
    forEachNodeClass(orphan, (_nc, target) => {
      seen.push(target);
      return [];
    });

    // Assess
    expect(seen[0]?.cluster).toEqual({ name: 'known', partition: 'aws' });
  });

  it('emits an error, not an evaluation, for an object that does not parse', () => {
    const { seen, drafts } = targetsOf([aNodeClassObject({ spec: { amiSelectorTerms: 1 } })]);
    expect(seen).toEqual([]);
    expect(drafts.map((draft) => draft.status)).toEqual(['error']);
  });
});

describe('per-object fault isolation', () => {
  it('turns a check that throws on one NodeClass into an error for that NodeClass only', () => {
    // Prepare: a check with a bug that only one object triggers
    const inventory = anInventory([
      aNodeClassObject({ name: 'good' }),
      aNodeClassObject({ name: 'bad' }),
      aNodeClassObject({ name: 'also-good' }),
    ]);
    const buggy = defineCheck({
      id: 'buggy',
      title: 'buggy',
      group: 'spec',
      severity: 'high',
      inputs: [],
      remediation: 'Fix it.',
      rationale: 'Exists for this test.',
      references: [],
      material: [],
      evaluate: (scanned) =>
        forEachNodeClass(scanned, (nodeClass, target) => {
          if (nodeClass.metadata.name === 'bad') throw new TypeError('boom on bad');
          return [{ status: 'pass', resource: target.resource, message: 'ok' }];
        }),
    });

    // Act
    const { findings } = runChecks(inventory, [buggy], { now: new Date('2026-11-01T00:00:00Z') });

    // Assess
    expect(findings.map((finding) => [finding.resource.name, finding.status])).toEqual([
      ['good', 'pass'],
      ['bad', 'error'],
      ['also-good', 'pass'],
    ]);
    const bad = findings.find((finding) => finding.resource.name === 'bad');
    expect(bad?.message).toContain('TypeError: boom on bad');
    expect(bad?.evidence).toEqual({ exception: 'TypeError', reason: 'boom on bad' });
  });
});
