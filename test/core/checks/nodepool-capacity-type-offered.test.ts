import { describe, expect, it } from 'vitest';
import { nodePoolCapacityTypeOffered } from '../../../lambda/core/checks/nodepool-capacity-type-offered.js';
import type { AwsNodeClassFacts } from '../../../lambda/core/facts/aws.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import { parseKarpenterVersion } from '../../../lambda/core/version.js';
import {
  aCapacityReservation,
  anAwsInventory,
  SCAN_TIME,
  someAwsFacts,
  throttled,
} from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';
import { aNodePoolObject, requirement, withNodePools } from '../../support/nodepool-builders.js';
import { aControllerUnreadState, CONTROLLER_UNREAD } from '../../support/read-faults.js';

const now = SCAN_TIME;
const reservedOnly = [requirement('karpenter.sh/capacity-type', 'In', ['reserved'])];
const withTerms = aNodeClassObject({
  spec: { capacityReservationSelectorTerms: [{ id: 'cr-0a1' }] },
});

function evaluate(
  nodeClass: unknown,
  facts: AwsNodeClassFacts,
  requirements: unknown[] = reservedOnly,
  version?: string
) {
  const karpenterVersion = parseKarpenterVersion(version);
  const inventory = withNodePools(
    anAwsInventory([nodeClass], facts, karpenterVersion ? { karpenterVersion } : {}),
    [aNodePoolObject({ requirements })]
  );
  return nodePoolCapacityTypeOffered.evaluate(inventory, { now });
}

const reservations = (list: ReturnType<typeof aCapacityReservation>[]) =>
  someAwsFacts({ capacityReservations: ok({ queries: [], reservations: list }) });

describe('nodepool-capacity-type-offered', () => {
  it('fails when a reserved-only NodePool uses a class without reservation terms', () => {
    const [finding] = evaluate(aNodeClassObject(), someAwsFacts());
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('no capacityReservationSelectorTerms');
    expect(finding?.message).toContain('ReservedCapacity feature gate');
    expect(finding?.evidence).toMatchObject({ reason: 'no-terms' });
  });

  it('fails when the terms select no active reservation (ended ones do not count)', () => {
    const ended = aCapacityReservation({ endDate: '2026-10-01T00:00:00Z' });
    const [finding] = evaluate(withTerms, reservations([ended]));
    expect(finding?.status).toBe('fail');
    expect(finding?.evidence).toMatchObject({ reason: 'no-active-reservation' });
  });

  it('passes with an active reservation and names the feature gate', () => {
    const [finding] = evaluate(
      withTerms,
      reservations([aCapacityReservation()]),
      reservedOnly,
      '1.6.0'
    );
    expect(finding?.status).toBe('pass');
    expect(finding?.message).toContain('cr-0a1');
    expect(finding?.message).toContain('ReservedCapacity');
  });

  it('fails on a Karpenter version before v1.3.0 whatever the class selects', () => {
    const [finding] = evaluate(
      withTerms,
      reservations([aCapacityReservation()]),
      reservedOnly,
      '1.2.1'
    );
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('1.2.1 does not offer');
    expect(finding?.message).toContain('v1.3.0');
  });

  it('is not applicable when other capacity types are allowed', () => {
    expect(evaluate(aNodeClassObject(), someAwsFacts(), [])[0]?.status).toBe('not-applicable');
    expect(
      evaluate(aNodeClassObject(), someAwsFacts(), [
        requirement('karpenter.sh/capacity-type', 'In', ['reserved', 'on-demand']),
      ])[0]?.status
    ).toBe('not-applicable');
    expect(
      evaluate(aNodeClassObject(), someAwsFacts(), [
        requirement('karpenter.sh/capacity-type', 'NotIn', ['spot', 'on-demand']),
      ])[0]?.status
    ).toBe('fail');
  });

  it('reports an error when reservations could not be read', () => {
    const [finding] = evaluate(withTerms, someAwsFacts({ capacityReservations: throttled() }));
    expect(finding?.status).toBe('error');
  });
});

describe('nodepool-capacity-type-offered: the controller Deployment could not be read', () => {
  const evaluateIn = (cluster: Parameters<typeof anAwsInventory>[2]) =>
    nodePoolCapacityTypeOffered.evaluate(
      withNodePools(anAwsInventory([withTerms], reservations([aCapacityReservation()]), cluster), [
        aNodePoolObject({ requirements: reservedOnly }),
      ]),
      { now }
    );
  const v121 = parseKarpenterVersion('1.2.1');

  it('reports an error with a read fault: the version and the feature gate are unknown', () => {
    const findings = evaluateIn({ state: aControllerUnreadState() });
    expect(findings.map((finding) => finding.status)).toEqual(['error']);
    expect(findings[0]?.readFault).toEqual(CONTROLLER_UNREAD);
    expect(findings[0]?.causedBy?.checkId).toBe('scanner-can-read-cluster');
  });

  it('still reports an error with --karpenter-version: the feature gate is the controller env', () => {
    const findings = evaluateIn({
      state: aControllerUnreadState(),
      ...(v121 ? { karpenterVersion: v121 } : {}),
    });
    expect(findings.map((finding) => finding.status)).toEqual(['error']);
    expect(findings[0]?.readFault).toEqual(CONTROLLER_UNREAD);
  });

  it('gives the verdict, as before, when the controller was simply not looked at', () => {
    expect(evaluateIn({})[0]?.status).toBe('pass');
    const [old] = evaluateIn(v121 ? { karpenterVersion: v121 } : {});
    expect(old?.status).toBe('fail');
    expect(old?.readFault).toBeUndefined();
  });
});
