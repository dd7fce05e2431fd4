import { describe, expect, it } from 'vitest';
import { nodePoolNodeClassExists } from '../../../lambda/core/checks/nodepool-nodeclass-exists.js';
import { emptyInventory } from '../../../lambda/core/inventory.js';
import { SCAN_TIME } from '../../support/aws-builders.js';
import { aNodeClassEntry, aNodeClassObject, anInventory } from '../../support/builders.js';
import { aNodePoolEntry, aNodePoolObject, withNodePools } from '../../support/nodepool-builders.js';

const now = SCAN_TIME;

describe('nodepool-nodeclass-exists', () => {
  it('passes when the class exists in the same cluster', () => {
    const inventory = withNodePools(
      anInventory([aNodeClassObject()], { cluster: { name: 'demo' } }),
      [aNodePoolObject()]
    );
    const [finding] = nodePoolNodeClassExists.evaluate(inventory, { now });
    expect(finding).toMatchObject({
      status: 'pass',
      resource: { cluster: 'demo', kind: 'NodePool', name: 'general' },
    });
  });

  it('fails naming the missing class and the classes the cluster has', () => {
    const inventory = withNodePools(
      anInventory([aNodeClassObject()], { cluster: { name: 'demo' } }),
      [aNodePoolObject({ nodeClass: 'gpu' })]
    );
    const [finding] = nodePoolNodeClassExists.evaluate(inventory, { now });
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('EC2NodeClass "gpu" does not exist in cluster "demo"');
    expect(finding?.message).toContain('"default"');
    expect(finding?.evidence).toEqual({ nodeClass: 'gpu' });
    expect(finding?.location).toEqual({ path: 'spec.template.spec.nodeClassRef.name' });
  });

  it('does not find a class of the same name in another cluster', () => {
    const inventory = emptyInventory({
      clusters: [
        { name: 'a', partition: 'aws' },
        { name: 'b', partition: 'aws' },
      ],
      nodeClasses: [aNodeClassEntry(aNodeClassObject(), 'b')],
      nodePools: [aNodePoolEntry(aNodePoolObject(), 'a')],
    });
    const [finding] = nodePoolNodeClassExists.evaluate(inventory, { now });
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('in cluster "a" (none found)');
  });

  it('says how many files it looked in when scanning manifests', () => {
    const inventory = emptyInventory({
      nodeClasses: [
        { ...aNodeClassEntry(aNodeClassObject()), source: { file: 'classes.yaml', document: 0 } },
      ],
      nodePools: [
        aNodePoolEntry(aNodePoolObject({ nodeClass: 'missing' }), '', 'pools.yaml'),
        aNodePoolEntry(aNodePoolObject({ name: 'other' }), '', 'more-pools.yaml'),
      ],
    });
    const [missing, found] = nodePoolNodeClassExists.evaluate(inventory, { now });
    expect(missing?.status).toBe('fail');
    expect(missing?.message).toContain('in the 3 file(s) scanned');
    expect(found?.status).toBe('pass');
  });

  it('is not applicable to a reference to another kind of class', () => {
    const inventory = withNodePools(anInventory([]), [
      aNodePoolObject({ ref: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'x' } }),
    ]);
    const [finding] = nodePoolNodeClassExists.evaluate(inventory, { now });
    expect(finding?.status).toBe('not-applicable');
    expect(finding?.message).toContain('karpenter.azure.com/AKSNodeClass');
  });

  it('gives an unparsable NodePool one error, a follow-on of nodepool-schema-valid', () => {
    const inventory = withNodePools(anInventory([]), [
      { apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name: 'broken' } },
    ]);
    const findings = nodePoolNodeClassExists.evaluate(inventory, { now });
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({
      status: 'error',
      causedBy: { checkId: 'nodepool-schema-valid' },
      resource: { kind: 'NodePool', name: 'broken' },
    });
  });
});
