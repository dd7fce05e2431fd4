import { describe, expect, it } from 'vitest';
import { controllerCanLaunch } from '../../../lambda/core/checks/controller-can-launch.js';
import { aPermissionsInventory, withSimulations } from '../../support/permission-builders.js';

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
});
