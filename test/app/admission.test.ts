import { describe, expect, it } from 'vitest';
import { applyAdmission } from '../../lambda/app/admission.js';
import type { CrdDocument } from '../../lambda/core/admission/types.js';
import { type ClusterContext, emptyInventory } from '../../lambda/core/inventory.js';
import { aNodeClassCrd, aNodePoolCrd, fakeAdmissionEngine } from '../support/admission-crds.js';
import { aNodeClassEntry, aNodeClassObject } from '../support/builders.js';
import { aNodePoolEntry, aNodePoolObject } from '../support/nodepool-builders.js';

function crd(document: Record<string, unknown>, location: string): CrdDocument {
  const name = (document.metadata as { name: string }).name;
  return { name, document, origin: { kind: 'cluster', location } };
}

function aCluster(name: string, crds?: ClusterContext['crds']): ClusterContext {
  return { name, partition: 'aws', region: 'eu-west-1', ...(crds ? { crds } : {}) };
}

describe('applyAdmission', () => {
  it('imports no engine when no cluster has a CRD', async () => {
    // Prepare
    let imported = false;
    const inventory = emptyInventory({
      clusters: [aCluster('prod')],
      nodeClasses: [aNodeClassEntry(aNodeClassObject(), 'prod')],
    });

    // Act
    const result = await applyAdmission(inventory, async () => {
      imported = true;
      throw new Error('must not be imported');
    });

    // Assess
    expect(imported).toBe(false);
    expect(result.inventory).toBe(inventory);
    expect(result.inputErrors).toEqual([]);
  });

  it("gives every object of a cluster its CRD's verdict, and loads a CRD installed twice once", async () => {
    // Prepare
    const { engine, loads } = fakeAdmissionEngine();
    const nodeClassCrd = aNodeClassCrd();
    const inventory = emptyInventory({
      inputs: new Set(['spec', 'cluster']),
      clusters: [
        aCluster('prod', {
          nodeClass: crd(nodeClassCrd, 'cluster prod'),
          nodePool: crd(aNodePoolCrd(), 'cluster prod'),
        }),
        aCluster('staging', { nodeClass: crd(structuredClone(nodeClassCrd), 'cluster staging') }),
        aCluster('legacy'),
      ],
      nodeClasses: [
        aNodeClassEntry(aNodeClassObject({ spec: { metadataOptions: undefined } }), 'prod'),
        aNodeClassEntry({ ...aNodeClassObject(), apiVersion: 'karpenter.k8s.aws/v1beta1' }, 'prod'),
        aNodeClassEntry(aNodeClassObject(), 'staging'),
        aNodeClassEntry(aNodeClassObject(), 'legacy'),
      ],
      nodePools: [
        aNodePoolEntry(aNodePoolObject(), 'prod'),
        aNodePoolEntry(aNodePoolObject(), 'staging'),
      ],
    });

    // Act
    const { inventory: admitted, inputErrors } = await applyAdmission(inventory, engine);

    // Assess
    expect(loads).toEqual([
      'ec2nodeclasses.karpenter.k8s.aws cluster prod',
      'nodepools.karpenter.sh cluster prod',
    ]);
    const [defaulted, unserved, staging, legacy] = admitted.nodeClasses;
    expect(defaulted?.admission?.crd).toBe('ec2nodeclasses.karpenter.k8s.aws from cluster prod');
    expect(defaulted?.admission?.defaulted).toMatchObject({
      spec: { metadataOptions: { httpProtocolIPv6: 'disabled' } },
    });
    expect(unserved?.admission?.violations).toEqual([
      expect.objectContaining({ path: 'apiVersion' }),
    ]);
    // The same document in two clusters is loaded once; each cluster's verdicts name its own.
    expect(staging?.admission?.crd).toBe('ec2nodeclasses.karpenter.k8s.aws from cluster staging');
    expect(legacy?.admission).toBeUndefined();
    expect(admitted.nodePools.map((entry) => entry.admission?.crd)).toEqual([
      'nodepools.karpenter.sh from cluster prod',
      undefined,
    ]);
    expect(inputErrors).toEqual([]);
  });

  it('falls back to the built-in rules for a CRD that cannot be loaded, and says so on the cluster', async () => {
    // Prepare
    const { engine } = fakeAdmissionEngine({ failOn: 'ec2nodeclasses.karpenter.k8s.aws' });
    const inventory = emptyInventory({
      inputs: new Set(['spec', 'cluster']),
      clusters: [aCluster('prod', { nodeClass: crd(aNodeClassCrd(), 'cluster prod') })],
      nodeClasses: [aNodeClassEntry(aNodeClassObject(), 'prod')],
    });

    // Act
    const { inventory: admitted, inputErrors } = await applyAdmission(inventory, engine);

    // Assess: a live cluster's problem is scanner-can-read-cluster's notice, not an input error.
    expect(admitted.nodeClasses[0]?.admission).toBeUndefined();
    expect(admitted.clusters[0]?.crds?.unavailable).toBe(
      'the CRD ec2nodeclasses.karpenter.k8s.aws from cluster prod cannot be evaluated: rule 3 uses an unknown CEL function'
    );
    expect(inputErrors).toEqual([]);
  });

  it('reports an unusable CRD of a manifest scan as an input error naming its file', async () => {
    // Prepare
    const { engine } = fakeAdmissionEngine({ failOn: 'ec2nodeclasses.karpenter.k8s.aws' });
    const manifestCrd: CrdDocument = {
      name: 'ec2nodeclasses.karpenter.k8s.aws',
      document: aNodeClassCrd(),
      origin: { kind: 'manifest', location: 'crds/ec2nodeclasses.yaml:1' },
    };
    const inventory = emptyInventory({
      clusters: [aCluster('', { nodeClass: manifestCrd })],
      nodeClasses: [aNodeClassEntry(aNodeClassObject())],
    });

    // Act
    const { inputErrors } = await applyAdmission(inventory, engine);

    // Assess
    expect(inputErrors).toEqual([
      {
        source: 'crds/ec2nodeclasses.yaml:1',
        message:
          'the CRD ec2nodeclasses.karpenter.k8s.aws from crds/ec2nodeclasses.yaml:1 cannot be evaluated: rule 3 uses an unknown CEL function; the built-in rules decide instead',
      },
    ]);
  });

  it('falls back, naming the cause, when the engine itself cannot be imported', async () => {
    // Prepare
    const inventory = emptyInventory({
      clusters: [aCluster('', { nodeClass: crd(aNodeClassCrd(), 'crd.yaml:1') })],
      nodeClasses: [aNodeClassEntry(aNodeClassObject())],
    });

    // Act
    const { inventory: admitted, inputErrors } = await applyAdmission(inventory, async () => {
      throw new Error("Cannot find package '@bufbuild/cel'");
    });

    // Assess
    expect(admitted.nodeClasses[0]?.admission).toBeUndefined();
    expect(inputErrors[0]?.message).toContain(
      "cannot be evaluated: the admission engine did not load (Cannot find package '@bufbuild/cel')"
    );
  });

  it('keeps the other objects when the engine throws on one', async () => {
    // Prepare
    const inventory = emptyInventory({
      clusters: [aCluster('', { nodeClass: crd(aNodeClassCrd(), 'crd.yaml:1') })],
      nodeClasses: [
        aNodeClassEntry(aNodeClassObject({ name: 'bad' })),
        aNodeClassEntry(aNodeClassObject({ name: 'good' })),
      ],
    });
    const review = (object: unknown) => {
      if ((object as { metadata: { name: string } }).metadata.name === 'bad') {
        throw new Error('stack overflow in rule');
      }
      return {
        crd: 'x',
        version: 'v1',
        violations: [],
        pruned: [],
        defaulted: object,
        openPaths: [],
        skippedTransitionRules: 0,
      };
    };

    // Act
    const { inventory: admitted, inputErrors } = await applyAdmission(
      inventory,
      async () => async () => ({ crd: 'x', review })
    );

    // Assess
    expect(admitted.nodeClasses.map((entry) => entry.admission?.crd)).toEqual([undefined, 'x']);
    expect(inputErrors[0]?.message).toContain('failed on an object: stack overflow in rule');
  });
});
