import { describe, expect, it } from 'vitest';
import { nodeClassReady } from '../../../lambda/core/checks/nodeclass-ready.js';
import { aNodeClassObject, anInventory } from '../../support/builders.js';

const now = new Date('2026-11-01T12:00:00Z');

function evaluate(status?: Record<string, unknown>) {
  const inventory = anInventory([aNodeClassObject(status ? { status } : {})], {
    cluster: { name: 'prod' },
    inputs: ['spec', 'cluster'],
  });
  return nodeClassReady.evaluate(inventory, { now });
}

describe('nodeclass-ready', () => {
  it('passes when Karpenter reports Ready=True', () => {
    const [finding] = evaluate({
      conditions: [
        { type: 'AMIsReady', status: 'True' },
        { type: 'Ready', status: 'True' },
      ],
    });
    expect(finding?.status).toBe('pass');
    expect(finding?.resource).toEqual({ cluster: 'prod', kind: 'EC2NodeClass', name: 'default' });
  });

  it("fails on Ready=False with Karpenter's reason and the failing dependents", () => {
    // Act
    const [finding] = evaluate({
      conditions: [
        { type: 'AMIsReady', status: 'True' },
        {
          type: 'SubnetsReady',
          status: 'False',
          reason: 'SubnetsNotFound',
          message: 'SubnetSelector did not match any Subnets',
        },
        {
          type: 'Ready',
          status: 'False',
          reason: 'UnhealthyDependents',
          message: 'SubnetsReady=False',
        },
      ],
    });

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('Ready=False/UnhealthyDependents (SubnetsReady=False)');
    expect(finding?.message).toContain(
      'SubnetsReady=False/SubnetsNotFound (SubnetSelector did not match any Subnets)'
    );
    expect(finding?.evidence?.notTrue).toHaveLength(1);
  });

  it('fails on Ready=Unknown', () => {
    const [finding] = evaluate({
      conditions: [
        { type: 'ValidationSucceeded', status: 'Unknown', reason: 'AwaitingReconciliation' },
        { type: 'Ready', status: 'Unknown', reason: 'ReconcilingDependents' },
      ],
    });
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('Ready=Unknown/ReconcilingDependents');
  });

  it('fails when there is no Ready condition at all', () => {
    const [finding] = evaluate();
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('not reconciled');
  });

  it('reports an error for a NodeClass that does not parse', () => {
    // Prepare
    const inventory = anInventory([aNodeClassObject({ spec: { amiSelectorTerms: 'x' } })], {
      inputs: ['spec', 'cluster'],
    });

    // Act
    const [finding] = nodeClassReady.evaluate(inventory, { now });

    // Assess
    expect(finding?.status).toBe('error');
  });
});
