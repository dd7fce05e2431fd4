import { describe, expect, it } from 'vitest';
import { capacityReservationsResolve } from '../../../lambda/core/checks/capacity-reservations-resolve.js';
import type { CapacityReservation } from '../../../lambda/core/facts/aws.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import {
  aCapacityReservation,
  anAwsInventory,
  SCAN_TIME,
  someAwsFacts,
  throttled,
} from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';

const now = SCAN_TIME;
const withTerms = aNodeClassObject({
  spec: { capacityReservationSelectorTerms: [{ tags: { team: 'ml' } }] },
});

function evaluateWith(reservations: CapacityReservation[]) {
  const facts = someAwsFacts({ capacityReservations: ok({ queries: [], reservations }) });
  return capacityReservationsResolve.evaluate(anAwsInventory([withTerms], facts), { now });
}

describe('capacity-reservations-resolve', () => {
  it('passes when an active reservation matches and does not end soon', () => {
    expect(
      evaluateWith([aCapacityReservation({ endDate: '2027-01-01T00:00:00Z' })])[0]?.status
    ).toBe('pass');
  });

  it('fails when no active reservation matches the term', () => {
    const [finding] = evaluateWith([]);
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('term 0 matches no active reservation');
  });

  it('treats a reservation whose end date has passed as gone', () => {
    const [finding] = evaluateWith([aCapacityReservation({ endDate: '2026-10-01T00:00:00Z' })]);
    expect(finding?.evidence).toMatchObject({ unmatchedTerms: [0] });
  });

  it('fails when a matched reservation ends within 7 days', () => {
    const [finding] = evaluateWith([aCapacityReservation({ endDate: '2026-11-05T00:00:00Z' })]);
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('cr-0a1 ends on 2026-11-05');
  });

  it('is not applicable without terms', () => {
    const [finding] = capacityReservationsResolve.evaluate(
      anAwsInventory([aNodeClassObject()], someAwsFacts()),
      { now }
    );
    expect(finding?.status).toBe('not-applicable');
  });

  it('reports an error when reservations could not be read', () => {
    const facts = someAwsFacts({
      capacityReservations: throttled('ec2:DescribeCapacityReservations'),
    });
    const [finding] = capacityReservationsResolve.evaluate(anAwsInventory([withTerms], facts), {
      now,
    });
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('throttled');
  });
});
