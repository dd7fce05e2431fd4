import { describe, expect, it } from 'vitest';
import { findCheck } from '../../../lambda/core/checks/index.js';
import type { AwsNodeClassFacts } from '../../../lambda/core/facts/aws.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import {
  launchResourcesOf,
  launchRootCheck,
  nodeRoleRootCheck,
} from '../../../lambda/core/iam/nodeclass-inputs.js';
import { parseEC2NodeClass } from '../../../lambda/core/schema.js';
import {
  aCapacityReservation,
  anAmiFacts,
  aRole,
  someAwsFacts,
  throttled,
} from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';

function parsed(raw: Record<string, unknown>) {
  const result = parseEC2NodeClass(raw);
  if (!result.ok) throw new Error('invalid test NodeClass');
  return result.value;
}

const nodeClass = parsed(aNodeClassObject());

describe('launchRootCheck', () => {
  it.each<[string, AwsNodeClassFacts, string]>([
    ['images unreadable', someAwsFacts({ amis: throttled() }), 'ami-selector-resolves'],
    [
      'image selection unreadable',
      someAwsFacts({ amis: ok(anAmiFacts({ available: throttled() })) }),
      'ami-selector-resolves',
    ],
    ['no image', someAwsFacts({ amis: ok(anAmiFacts({ images: [] })) }), 'ami-selector-resolves'],
    ['subnets unreadable', someAwsFacts({ subnets: throttled() }), 'subnets-resolve'],
    ['no subnet', someAwsFacts({ subnets: ok({ queries: [], subnets: [] }) }), 'subnets-resolve'],
    [
      'no security group',
      someAwsFacts({ securityGroups: ok({ queries: [], securityGroups: [] }) }),
      'security-groups-resolve',
    ],
    [
      'reservations unreadable',
      someAwsFacts({ capacityReservations: throttled() }),
      'capacity-reservations-resolve',
    ],
  ])('names the check that reports %s', (_case, facts, checkId) => {
    // Act
    const root = launchRootCheck(facts, nodeClass);

    // Assess: the launch resources are indeed unknown or empty, and the root is a real check.
    const launch = launchResourcesOf(facts, nodeClass);
    expect(
      launch.status === 'unavailable' ||
        launch.value.imageIds.length === 0 ||
        launch.value.subnetIds.length === 0 ||
        launch.value.securityGroupIds.length === 0
    ).toBe(true);
    expect(root).toBe(checkId);
    expect(findCheck(checkId)?.id).toBe(checkId);
  });

  it('names the first kind when several failed, in the order the resources are resolved', () => {
    const facts = someAwsFacts({ subnets: throttled(), securityGroups: throttled() });
    expect(launchRootCheck(facts, nodeClass)).toBe('subnets-resolve');
  });

  it('names nothing when every resource resolved', () => {
    const facts = someAwsFacts({
      capacityReservations: ok({ queries: [], reservations: [aCapacityReservation()] }),
    });
    expect(launchResourcesOf(facts, nodeClass).status).toBe('ok');
    expect(launchRootCheck(facts, nodeClass)).toBeUndefined();
  });

  it('names nothing when nothing was collected and Karpenter reported no status', () => {
    expect(launchResourcesOf(undefined, nodeClass).status).toBe('unavailable');
    expect(launchRootCheck(undefined, nodeClass)).toBeUndefined();
  });

  it("names nothing when Karpenter's status supplies what was not collected", () => {
    const withStatus = parsed(
      aNodeClassObject({
        status: {
          amis: [{ id: 'ami-0123456789abcdef0' }],
          subnets: [{ id: 'subnet-a' }],
          securityGroups: [{ id: 'sg-a' }],
        },
      })
    );
    expect(launchRootCheck(undefined, withStatus)).toBeUndefined();
  });
});

describe('nodeRoleRootCheck', () => {
  it('names node-role-valid when the role could not be read', () => {
    expect(nodeRoleRootCheck({ nodeRole: throttled('iam:GetRole') })).toBe('node-role-valid');
  });

  it('names instance-profile-exists when the profile holds no role to read', () => {
    const facts = { nodeRole: ok({ source: 'instance-profile' as const }) };
    expect(nodeRoleRootCheck(facts)).toBe('instance-profile-exists');
  });

  it('names nothing when the role is known, or was not looked up', () => {
    const known = { nodeRole: ok({ source: 'spec.role' as const, name: 'r', role: aRole() }) };
    expect(nodeRoleRootCheck(known)).toBeUndefined();
    expect(nodeRoleRootCheck({})).toBeUndefined();
  });
});
