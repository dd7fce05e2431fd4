import { describe, expect, it } from 'vitest';
import { controllerCanLaunch } from '../../../lambda/core/checks/controller-can-launch.js';
import { runChecks } from '../../../lambda/core/evaluate.js';
import { ok, type Slice, unavailable } from '../../../lambda/core/facts/slice.js';
import { aNodeClassEntry } from '../../support/builders.js';
import {
  aCluster,
  aClusterState,
  aPermissionsInventory,
  aRoleModeNodeClass,
  CONTROLLER_ROLE,
  type Decide,
  withSimulations,
} from '../../support/permission-builders.js';

const NODEPOOL_TAG = 'aws:RequestTag/karpenter.sh/nodepool';

/** The cluster's NodePools listed as the API server answered (403, or an empty list). */
function inventoryWithNodePools(read: Slice<{ nodePoolCount: number }>) {
  const state = { ...aClusterState({ irsaRoleArn: CONTROLLER_ROLE }), nodePools: read };
  return aPermissionsInventory({ clusters: [aCluster({ state })], nodePools: [] });
}

const now = new Date('2026-11-01T00:00:00Z');

describe('controller-can-launch', () => {
  it('passes when every launch simulation is allowed', () => {
    const findings = controllerCanLaunch.evaluate(withSimulations(aPermissionsInventory()), {
      now,
    });

    expect(findings.map((finding) => finding.status)).toEqual(['pass', 'pass']);
  });

  it('fails with the denied action, the boundary as source, and a scoped statement', () => {
    const inventory = withSimulations(aPermissionsInventory(), (request, action) =>
      request.kind === 'create-fleet' && action === 'ec2:CreateTags'
        ? { decision: 'implicitDeny', allowedByPermissionsBoundary: false }
        : {}
    );

    const [finding] = controllerCanLaunch.evaluate(inventory, { now });

    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain("denied by the role's permissions boundary");
    expect(finding?.evidence?.denials).toHaveLength(4);
    expect(finding?.remediation).toContain('"ec2:CreateAction":["CreateFleet"]');
    expect(finding?.remediation).toContain('AllowScopedResourceCreationTagging');
  });

  it('never passes when the policies need context keys the scanner cannot supply', () => {
    const inventory = withSimulations(aPermissionsInventory(), (request) =>
      request.kind === 'run-instances' ? { missingContextValues: ['ec2:MetadataHttpTokens'] } : {}
    );

    const [finding] = controllerCanLaunch.evaluate(inventory, { now });

    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('ec2:MetadataHttpTokens');
  });

  it('adds DryRun verdicts as separate findings', () => {
    const inventory = withSimulations(aPermissionsInventory(), () => ({}), {
      dryRun: [
        { operation: 'RunInstances', outcome: 'allowed', message: 'DryRunOperation' },
        {
          operation: 'CreateFleet',
          outcome: 'unauthorized',
          code: 'UnauthorizedOperation',
          message: 'encoded',
          decodedMessage: 'explicit deny in a service control policy',
        },
        {
          operation: 'RunInstances',
          outcome: 'rejected',
          code: 'InvalidBlockDeviceMapping',
          message: 'volume too small',
        },
        { operation: 'CreateFleet', outcome: 'skipped', message: 'no launch template' },
        { operation: 'CreateFleet', outcome: 'unavailable', message: 'AssumeRole denied' },
      ],
    });

    const findings = controllerCanLaunch
      .evaluate(inventory, { now })
      .filter((finding) => finding.resource.name === 'default');

    expect(findings.map((finding) => finding.status)).toEqual([
      'pass',
      'pass',
      'fail',
      'fail',
      'not-applicable',
      'error',
    ]);
    expect(findings[2]?.message).toContain('explicit deny in a service control policy');
    expect(findings[3]?.message).toContain('InvalidBlockDeviceMapping');
    expect(findings[3]?.discriminator).toBe('dry-run:RunInstances');
  });

  it('reports an error naming the unreadable NodePools instead of simulating a made-up NodePool', () => {
    // Prepare: the (unreadable) NodePool `general` may not launch; an empty NodePool tag would be
    // allowed, so simulating one would pass.
    const inventory = withSimulations(
      inventoryWithNodePools(
        unavailable('access-denied', 'HTTP 403 on /apis/karpenter.sh/v1/nodepools')
      ),
      (request) =>
        request.context.some((entry) => entry.key === NODEPOOL_TAG && entry.values[0] === 'general')
          ? { decision: 'explicitDeny' }
          : {}
    );
    // Act
    const findings = controllerCanLaunch.evaluate(inventory, { now });
    // Assess
    expect(findings.map((finding) => finding.status)).toEqual(['error', 'error']);
    expect(findings[0]?.message).toContain('NodePools could not be read');
    expect(findings[0]?.message).toContain('access-denied');
    expect(findings[0]?.message).toContain('HTTP 403');
    expect(findings[0]?.evidence).toMatchObject({
      simulations: 0,
      unsimulated: [{ kind: 'launch', reason: 'access-denied' }],
    });
  });

  it('simulates the empty NodePool tag of Karpenter’s validation when no NodePool uses the class', () => {
    // Prepare: the NodePools were listed and none exists.
    const seen: string[] = [];
    const inventory = withSimulations(
      inventoryWithNodePools(ok({ nodePoolCount: 0 })),
      (request) => {
        for (const entry of request.context)
          if (entry.key === NODEPOOL_TAG) seen.push(entry.values[0] ?? '');
        return {};
      }
    );
    // Act
    const findings = controllerCanLaunch.evaluate(inventory, { now });
    // Assess
    expect(findings.map((finding) => finding.status)).toEqual(['pass', 'pass']);
    expect(new Set(seen)).toEqual(new Set(['']));
  });

  describe('material facts', () => {
    const denyImages: Decide = (_request, _action, resource) =>
      resource.includes(':image/') ? { decision: 'implicitDeny' } : {};
    /** The launch finding of `default` when its image is `imageId`. */
    const launchWith = (imageId: string, decide: Decide = denyImages) => {
      const raw = aRoleModeNodeClass();
      const status = { ...(raw.status as Record<string, unknown>), amis: [{ id: imageId }] };
      const entry = aNodeClassEntry({ ...raw, status }, 'demo');
      const inventory = withSimulations(aPermissionsInventory({ nodeClasses: [entry] }), decide);
      return runChecks(inventory, [controllerCanLaunch], { now }).findings[0];
    };

    it('keeps the material hash when the same denial now names a newer image', () => {
      // Act
      const first = launchWith('ami-0123456789abcdef0');
      const later = launchWith('ami-0fedcba9876543210');

      // Assess
      expect(first?.status).toBe('fail');
      expect(JSON.stringify(later?.evidence)).toContain('ami-0fedcba9876543210');
      expect(later?.materialHash).toBe(first?.materialHash);
    });

    it('changes the material hash when another action is denied', () => {
      // Act
      const first = launchWith('ami-0123456789abcdef0');
      const later = launchWith('ami-0123456789abcdef0', (request, action, resource) =>
        action === 'ec2:CreateTags'
          ? { decision: 'explicitDeny' }
          : denyImages(request, action, resource)
      );

      // Assess
      expect(later?.severity).toBe(first?.severity);
      expect(later?.materialHash).not.toBe(first?.materialHash);
    });
  });
});
