import { describe, expect, it } from 'vitest';
import { nodePoolMaxPodsWithinEniLimit } from '../../../lambda/core/checks/nodepool-max-pods-within-eni-limit.js';
import type { AwsNodeClassFacts } from '../../../lambda/core/facts/aws.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import type { Inventory } from '../../../lambda/core/inventory.js';
import { anAwsInventory, SCAN_TIME, someAwsFacts } from '../../support/aws-builders.js';
import { aKarpenterVersion, aNodeClassObject } from '../../support/builders.js';
import { catalog, offeringsIn } from '../../support/instance-types.js';
import { aNodePoolObject, requirement, withNodePools } from '../../support/nodepool-builders.js';

function facts(overrides: Partial<AwsNodeClassFacts> = {}): AwsNodeClassFacts {
  return someAwsFacts({
    instanceTypes: ok({ types: catalog() }),
    instanceTypeOfferings: ok({ offerings: offeringsIn(['us-east-1a']) }),
    ...overrides,
  });
}

function inventory(
  kubelet: Record<string, unknown> | undefined,
  requirements: unknown[] = [],
  spec = {}
): Inventory {
  return withNodePools(
    anAwsInventory(
      [aNodeClassObject({ spec: { ...(kubelet ? { kubelet } : {}), ...spec } })],
      facts(),
      { karpenterVersion: aKarpenterVersion('1.14.1') }
    ),
    [aNodePoolObject({ requirements })]
  );
}

function evaluate(subject: Inventory) {
  const findings = nodePoolMaxPodsWithinEniLimit.evaluate(subject, { now: SCAN_TIME });
  expect(findings).toHaveLength(1);
  return findings[0];
}

const AMD64 = requirement('kubernetes.io/arch', 'In', ['amd64']);

describe('nodepool-max-pods-within-eni-limit', () => {
  it('fails when maxPods exceeds the ENI limit of types the NodePool can launch, smallest first', () => {
    const finding = evaluate(inventory({ maxPods: 110 }, [AMD64]));

    expect(finding?.status).toBe('fail');
    // t3.medium: 3 ENIs × (6 − 1) + 2; the large types 3 × 9 + 2; the xlarge ones 4 × 14 + 2.
    expect(finding?.message).toContain(
      'kubelet maxPods 110 of EC2NodeClass "default" exceeds what the ENIs address on 8 of the 9 type(s) the NodePool can launch: t3.medium (17), c7i.large (29), m7i.large (29), r7i.large (29), c7i.xlarge (58) and 3 more.'
    );
    expect(finding?.message).toContain('ContainerCreating');
    expect(finding?.evidence).toMatchObject({ maxPods: 110 });
    const evidence = finding?.evidence as { overcommitted?: unknown[] } | undefined;
    expect(evidence?.overcommitted?.[0]).toEqual({
      instanceType: 't3.medium',
      pods: 110,
      eniPods: 17,
    });
  });

  it('passes a maxPods every launchable type can address, and caps it with podsPerCore', () => {
    expect(evaluate(inventory({ maxPods: 17 }, [AMD64]))?.status).toBe('pass');
    // 110, but at most 10 per core: 20 on the 2-vCPU t3.medium, whose ENIs address 17.
    expect(evaluate(inventory({ maxPods: 110, podsPerCore: 10 }, [AMD64]))?.message).toContain(
      't3.medium (17)'
    );
    // At most 8 per core: 16 on the 2-vCPU types, within every ENI limit.
    expect(evaluate(inventory({ maxPods: 110, podsPerCore: 8 }, [AMD64]))?.status).toBe('pass');
  });

  it('only considers the types the NodePool can launch', () => {
    const large = requirement('karpenter.k8s.aws/instance-cpu', 'Gt', ['64']);
    expect(evaluate(inventory({ maxPods: 250 }, [large]))?.status).toBe('pass');
  });

  it('is not applicable without maxPods, on Windows, or when nothing can launch', () => {
    expect(evaluate(inventory(undefined))?.status).toBe('not-applicable');
    expect(
      evaluate(inventory({ maxPods: 110 }, [AMD64], { amiFamily: 'Windows2022' }))?.status
    ).toBe('not-applicable');
    const none = evaluate(
      inventory({ maxPods: 110 }, [
        requirement('karpenter.k8s.aws/instance-family', 'In', ['none']),
      ])
    );
    expect(none?.status).toBe('not-applicable');
    expect(none?.causedBy).toEqual({ checkId: 'nodepool-instance-types-offered' });
  });
});
