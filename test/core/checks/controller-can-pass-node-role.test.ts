import { describe, expect, it } from 'vitest';
import { controllerCanPassNodeRole } from '../../../lambda/core/checks/controller-can-pass-node-role.js';
import { unavailable } from '../../../lambda/core/facts/slice.js';
import {
  aCluster,
  aClusterState,
  aPermissionsInventory,
  CONTROLLER_ROLE,
  GPU_NODE_ROLE,
  withSimulations,
} from '../../support/permission-builders.js';

const now = new Date('2026-11-01T00:00:00Z');

/** The cluster's NodePools could not be listed (HTTP 403 from the Kubernetes API). */
function nodePoolsForbidden() {
  const state = {
    ...aClusterState({ irsaRoleArn: CONTROLLER_ROLE }),
    nodePools: unavailable<never>('access-denied', 'HTTP 403 on /apis/karpenter.sh/v1/nodepools'),
  };
  return aPermissionsInventory({ clusters: [aCluster({ state })], nodePools: [] });
}

describe('controller-can-pass-node-role', () => {
  it('passes when PassRole on each node role is allowed', () => {
    // Prepare
    const inventory = withSimulations(aPermissionsInventory());

    // Act
    const findings = controllerCanPassNodeRole.evaluate(inventory, { now });

    // Assess
    expect(findings.map((finding) => finding.status)).toEqual(['pass', 'pass']);
    expect(findings[0]?.evidence?.limits).toContain('does not evaluate session policies');
  });

  it("fails only the class whose profile's role may not be passed, with a paste-ready statement", () => {
    const inventory = withSimulations(aPermissionsInventory(), (_request, action, resource) =>
      action === 'iam:PassRole' && resource === GPU_NODE_ROLE ? { decision: 'implicitDeny' } : {}
    );

    const findings = controllerCanPassNodeRole.evaluate(inventory, { now });

    expect(findings.map((finding) => [finding.resource.name, finding.status])).toEqual([
      ['default', 'pass'],
      ['gpu', 'fail'],
    ]);
    const failure = findings[1];
    expect(failure?.message).toContain(
      `iam:PassRole on ${GPU_NODE_ROLE}: not allowed by any policy`
    );
    const json = failure?.remediation?.slice(failure.remediation.indexOf('{')) ?? '';
    expect(JSON.parse(json)).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Sid: 'AllowPassingInstanceRole',
          Effect: 'Allow',
          Action: ['iam:PassRole'],
          Resource: [GPU_NODE_ROLE],
          Condition: {
            StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'] },
          },
        },
      ],
    });
  });

  it('names an SCP and offers no Allow statement for it', () => {
    const inventory = withSimulations(aPermissionsInventory(), (_request, action) =>
      action === 'iam:PassRole' ? { decision: 'explicitDeny', allowedByOrganizations: false } : {}
    );

    const [finding] = controllerCanPassNodeRole.evaluate(inventory, { now });

    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('service control policy');
    expect(finding?.remediation).toContain('organization administrators');
    expect(finding?.evidence?.remediationPolicy).toBeUndefined();
  });

  it('reports an error, not a pass, when the simulation was throttled', () => {
    const inventory = withSimulations(aPermissionsInventory(), (request) =>
      request.kind === 'pass-node-role' ? 'unavailable' : {}
    );

    const [finding] = controllerCanPassNodeRole.evaluate(inventory, { now });

    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('Rate exceeded');
  });

  it('keeps its verdict when the cluster’s NodePools could not be read (no NodePool in its requests)', () => {
    const findings = controllerCanPassNodeRole.evaluate(withSimulations(nodePoolsForbidden()), {
      now,
    });

    expect(findings.map((finding) => finding.status)).toEqual(
      controllerCanPassNodeRole
        .evaluate(withSimulations(aPermissionsInventory()), { now })
        .map((f) => f.status)
    );
    expect(findings.map((finding) => finding.status)).not.toContain('error');
  });
});
