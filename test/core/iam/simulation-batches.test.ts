import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type {
  SimulationRequest,
  SimulationResult,
} from '../../../lambda/core/facts/permissions.js';
import { UNKNOWN_USAGE } from '../../../lambda/core/iam/policy-conditions.js';
import { simulationKey } from '../../../lambda/core/iam/request-context.js';
import {
  batchSimulations,
  memberResults,
  RESULTS_PER_CALL,
  usesRepresentative,
} from '../../../lambda/core/iam/simulation-batches.js';

const PRINCIPAL = 'arn:aws:iam::111122223333:role/Controller';
const ACTIONS = Array.from({ length: 14 }, (_, index) => `ec2:Action${index}`);
const RESOURCES = Array.from({ length: 140 }, (_, index) => `arn:aws:ec2:::subnet/s-${index}`);

function requestOf(actions: readonly string[], resources: readonly string[], region = 'r1') {
  const body = {
    principalArn: PRINCIPAL,
    actions: [...actions],
    resourceArns: [...resources],
    context: [{ key: 'aws:RequestedRegion', type: 'string' as const, values: [region] }],
  };
  return {
    ...body,
    key: simulationKey(body),
    kind: 'use-existing-resources',
    group: 'launch',
  } satisfies SimulationRequest;
}

/** What IAM returns for a call: one result per action and resource. */
function answer(request: SimulationRequest): SimulationResult[] {
  return request.actions.flatMap((action) =>
    request.resourceArns.map((resource) => ({
      action,
      resource,
      decision: 'allowed' as const,
      matchedStatements: [],
      missingContextValues: [],
    }))
  );
}

describe('simulation batches packed by results', () => {
  it('sends no call over a page of results, and answers every pair of every request', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            actions: fc.subarray(ACTIONS, { minLength: 1 }),
            resources: fc.subarray(RESOURCES, { minLength: 1, maxLength: 60 }),
            region: fc.constantFrom('r1', 'r2'),
          }),
          { minLength: 1, maxLength: 8 }
        ),
        (items) => {
          const requests = items.map((item) =>
            requestOf(item.actions, item.resources, item.region)
          );
          const batches = batchSimulations(requests, () => UNKNOWN_USAGE);
          for (const batch of batches) {
            const { actions, resourceArns, context } = batch.request;
            expect(actions.length * resourceArns.length).toBeLessThanOrEqual(RESULTS_PER_CALL);
            for (const member of batch.members) expect(member.context).toEqual(context);
          }
          for (const request of requests) {
            const answered = batches
              .filter((batch) => batch.members.some((member) => member.key === request.key))
              .flatMap((batch) => answer(batch.request));
            const own = memberResults(request, answered);
            expect(own.ok).toBe(true);
            if (own.ok) expect(own.results).toEqual(answer(request));
          }
          // No call is all junk: each holds a pair some member asked for.
          for (const batch of batches) {
            const asked = batch.members.some((member) =>
              member.actions.some(
                (action) =>
                  batch.request.actions.includes(action) &&
                  member.resourceArns.some((arn) => batch.request.resourceArns.includes(arn))
              )
            );
            expect(asked).toBe(true);
          }
        }
      ),
      { numRuns: 80 }
    );
  });

  it('cuts an oversized request into full calls: 3 actions × 140 resources at 100 a call in 5 calls of 99 or less', () => {
    const batches = batchSimulations(
      [requestOf(ACTIONS.slice(0, 3), RESOURCES)],
      () => UNKNOWN_USAGE,
      100
    );
    expect(batches.map((batch) => batch.request.resourceArns.length)).toEqual([33, 33, 33, 33, 8]);
  });

  it("fits 3 actions × 140 resources in one call of IAM's largest page (1,000 results)", () => {
    const batches = batchSimulations(
      [requestOf(ACTIONS.slice(0, 3), RESOURCES)],
      () => UNKNOWN_USAGE
    );
    expect(batches.map((batch) => batch.request.resourceArns.length)).toEqual([140]);
    expect(RESULTS_PER_CALL).toBe(1000);
  });

  it('packs requests of different shapes and one context into one call when their cross product fits', () => {
    const requests = [
      requestOf(['ec2:RunInstances', 'ec2:CreateFleet'], RESOURCES.slice(0, 26)),
      requestOf(['ec2:RunInstances'], ['arn:aws:ec2:::instance/*']),
      requestOf(['ec2:CreateLaunchTemplate'], ['arn:aws:ec2:::launch-template/*']),
    ];
    const batches = batchSimulations(requests, () => UNKNOWN_USAGE);
    expect(batches).toHaveLength(1);
    expect(batches[0]?.request.actions).toEqual([
      'ec2:RunInstances',
      'ec2:CreateFleet',
      'ec2:CreateLaunchTemplate',
    ]);
    expect(batches[0]?.members).toHaveLength(3);
    const [batch] = batches;
    if (batch === undefined) throw new Error('no batch');
    expect(requests.some((request) => usesRepresentative(batch, request))).toBe(false);
  });
});
