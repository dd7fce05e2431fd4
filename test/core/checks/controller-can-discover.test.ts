import { describe, expect, it } from 'vitest';
import { controllerCanDiscover } from '../../../lambda/core/checks/controller-can-discover.js';
import { ok, unavailable } from '../../../lambda/core/facts/slice.js';
import {
  aCluster,
  aClusterState,
  aPermissionsInventory,
  CONTROLLER_ROLE,
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

describe('controller-can-discover', () => {
  it('passes when Describe*, GetParameter and DescribeCluster are allowed', () => {
    const findings = controllerCanDiscover.evaluate(withSimulations(aPermissionsInventory()), {
      now,
    });

    expect(findings.map((finding) => finding.status)).toEqual(['pass', 'pass']);
  });

  it('fails for a custom SSM parameter outside /aws/service/', () => {
    const inventory = withSimulations(aPermissionsInventory(), (_request, action, resource) =>
      action === 'ssm:GetParameter' && resource.includes('parameter/team/')
        ? { decision: 'implicitDeny' }
        : {}
    );

    const findings = controllerCanDiscover.evaluate(inventory, { now });

    expect(findings.map((finding) => finding.status)).toEqual(['pass', 'fail']);
    expect(findings[1]?.remediation).toContain(
      'arn:aws:ssm:us-east-1:111122223333:parameter/team/gpu/ami'
    );
  });

  it('reports an error when the controller role is unknown', () => {
    const cluster = aCluster({ state: aClusterState({ associations: ok([]) }) });
    const inventory = withSimulations(aPermissionsInventory({ clusters: [cluster] }));

    const findings = controllerCanDiscover.evaluate(inventory, { now });

    expect(findings.map((finding) => finding.status)).toEqual(['error', 'error']);
    expect(findings[0]?.message).toContain('controller-role-found');
  });

  it('reports an error when permissions were not simulated for a class', () => {
    const findings = controllerCanDiscover.evaluate(aPermissionsInventory(), { now });

    expect(findings[0]?.status).toBe('error');
  });

  it('keeps its verdict when the cluster’s NodePools could not be read (no NodePool in its requests)', () => {
    const findings = controllerCanDiscover.evaluate(withSimulations(nodePoolsForbidden()), { now });

    expect(findings.map((finding) => finding.status)).toEqual(
      controllerCanDiscover
        .evaluate(withSimulations(aPermissionsInventory()), { now })
        .map((f) => f.status)
    );
    expect(findings.map((finding) => finding.status)).not.toContain('error');
  });
});
