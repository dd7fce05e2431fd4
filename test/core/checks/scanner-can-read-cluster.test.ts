import { describe, expect, it } from 'vitest';
import type { ClusterCrds } from '../../../lambda/core/admission/types.js';
import { scannerCanReadCluster } from '../../../lambda/core/checks/scanner-can-read-cluster.js';
import type { ClusterState } from '../../../lambda/core/facts/cluster.js';
import { ok, unavailable } from '../../../lambda/core/facts/slice.js';
import { anInventory } from '../../support/builders.js';

const now = new Date('2026-11-01T12:00:00Z');
const endpoint = 'https://ABC.gr7.eu-west-1.eks.amazonaws.com';
const path = '/apis/karpenter.k8s.aws/v1/ec2nodeclasses';

function evaluate(state: ClusterState | undefined, crds?: ClusterCrds) {
  const inventory = anInventory([], {
    cluster: {
      name: 'prod',
      region: 'eu-west-1',
      ...(state ? { state } : {}),
      ...(crds ? { crds } : {}),
    },
    inputs: ['spec', 'cluster'],
  });
  return scannerCanReadCluster.evaluate(inventory, { now });
}

describe('scanner-can-read-cluster', () => {
  it('passes when the NodeClasses were listed', () => {
    const [finding, ...rest] = evaluate({ read: ok({ nodeClassCount: 3 }), endpoint });
    expect(finding?.status).toBe('pass');
    expect(finding?.resource).toEqual({ cluster: 'prod', kind: 'Cluster', name: 'prod' });
    expect(finding?.message).toContain('Listed 3');
    expect(rest).toEqual([]);
  });

  it('fails on 401 with the access entry command and the RBAC YAML', () => {
    // Act
    const [finding] = evaluate({
      read: unavailable('access-denied', 'HTTP 401'),
      readFailure: { kind: 'http', httpStatus: 401, path },
      endpoint,
    });

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('HTTP 401');
    expect(finding?.remediation).toContain(
      'aws eks create-access-entry --cluster-name prod --region eu-west-1 --principal-arn <scanner-role-arn> --type STANDARD --kubernetes-groups nodeclass-scanner'
    );
    expect(finding?.remediation).toContain('kind: ClusterRole');
  });

  it('fails on 403 with a ClusterRole granting get/list/watch on what the scanner reads', () => {
    // Act
    const [finding] = evaluate({
      read: unavailable('access-denied', 'forbidden'),
      readFailure: { kind: 'http', httpStatus: 403, path },
      endpoint,
    });

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('HTTP 403');
    const yaml = finding?.remediation ?? '';
    for (const [group, resource] of [
      ['karpenter.k8s.aws', 'ec2nodeclasses'],
      ['karpenter.sh', 'nodepools'],
      ['apps', 'deployments'],
      ['', 'serviceaccounts'],
    ]) {
      expect(yaml).toContain(
        `  - apiGroups: ["${group}"]\n    resources: ["${resource}"]\n    verbs: ["get", "list", "watch"]`
      );
    }
    expect(yaml).toContain('kind: ClusterRoleBinding');
    expect(yaml).toContain('    name: nodeclass-scanner');
  });

  it('is not applicable when the Karpenter CRD is not installed (404)', () => {
    const [finding] = evaluate({
      read: unavailable('not-installed', 'not served'),
      readFailure: { kind: 'http', httpStatus: 404, path },
      endpoint,
    });
    expect(finding?.status).toBe('not-applicable');
  });

  it('reports an error naming the endpoint, and the VPC need, for a private endpoint timeout', () => {
    // Act
    const [finding] = evaluate({
      read: unavailable('timeout', `connecting to ${endpoint} timed out after 5000 ms`),
      readFailure: { kind: 'timeout', path },
      endpoint,
      endpointAccess: { publicAccess: false, privateAccess: true },
    });

    // Assess
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain(`Could not reach ${endpoint}`);
    expect(finding?.message).toContain('needs VPC access');
  });

  it('names the allowed CIDRs when public access is restricted', () => {
    const [finding] = evaluate({
      read: unavailable('unreachable', 'ECONNRESET'),
      readFailure: { kind: 'network', path },
      endpoint,
      endpointAccess: { publicAccess: true, publicAccessCidrs: ['203.0.113.0/24'] },
    });
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('203.0.113.0/24');
  });

  it('reports an error for a 500 and for malformed JSON, without a VPC hint', () => {
    for (const readFailure of [
      { kind: 'http', httpStatus: 500, path },
      { kind: 'malformed', path },
    ] as const) {
      const [finding] = evaluate({
        read: unavailable(readFailure.kind === 'http' ? 'unreachable' : 'invalid-response', 'bad'),
        readFailure,
        endpoint,
        endpointAccess: { publicAccess: false },
      });
      expect(finding?.status).toBe('error');
      expect(finding?.message).toContain(`Could not list EC2NodeClasses from ${endpoint}`);
      expect(finding?.message).not.toContain('VPC');
    }
  });

  it('fails with the IAM fix when DescribeCluster itself is denied', () => {
    const [finding] = evaluate({
      read: unavailable('access-denied', 'eks:DescribeCluster failed (AccessDeniedException)'),
    });
    expect(finding?.status).toBe('fail');
    expect(finding?.remediation).toContain('eks:DescribeCluster');
  });

  it('adds findings for NodePools and the controller it could not read', () => {
    // Act
    const findings = evaluate({
      read: ok({ nodeClassCount: 1 }),
      endpoint,
      nodePools: unavailable('unreachable', 'HTTP 500'),
      controller: unavailable('access-denied', 'deployments.apps is forbidden'),
    });

    // Assess
    expect(findings.map((finding) => [finding.status, finding.discriminator])).toEqual([
      ['pass', undefined],
      ['error', 'nodepools'],
      ['fail', 'controller'],
    ]);
  });

  it('reports an error for a live cluster whose state was not collected', () => {
    const [finding] = evaluate(undefined);
    expect(finding?.status).toBe('error');
  });

  it('ignores the unnamed cluster of a manifest scan', () => {
    // Prepare
    const inventory = anInventory([], { inputs: ['spec', 'cluster'] });

    // Act
    const findings = scannerCanReadCluster.evaluate(inventory, { now });

    // Assess
    expect(findings).toEqual([]);
  });

  describe("Karpenter's CRDs", () => {
    const listed: ClusterState = { read: ok({ nodeClassCount: 1 }), endpoint };

    it('adds a notice with the ClusterRole when RBAC forbade reading them', () => {
      // Act
      const [, notice, ...rest] = evaluate(listed, {
        unavailable: 'the CRD nodepools.karpenter.sh may not be read (HTTP 403)',
        denied: true,
      });

      // Assess
      expect(rest).toEqual([]);
      expect(notice).toMatchObject({
        status: 'notice',
        discriminator: 'crds',
        message:
          "Admission in prod is checked with the scanner's built-in rules, not the installed CRDs: the CRD nodepools.karpenter.sh may not be read (HTTP 403).",
        evidence: { crds: 'access-denied' },
      });
      expect(notice?.remediation).toContain('verbs: ["get"]');
    });

    it('adds a notice without RBAC advice when a CRD could not be used for another reason', () => {
      const [, notice] = evaluate(listed, {
        unavailable:
          'the CRD ec2nodeclasses.karpenter.k8s.aws from cluster prod cannot be evaluated: x',
      });
      expect(notice?.status).toBe('notice');
      expect(notice?.evidence).toMatchObject({ crds: 'unavailable' });
      expect(notice?.remediation).toBeUndefined();
    });

    it('says nothing when the CRDs were read, or the API server does not serve the CRD objects', () => {
      expect(evaluate(listed, {}).map((finding) => finding.status)).toEqual(['pass']);
      expect(
        evaluate(listed, {
          unavailable: 'the CRD nodepools.karpenter.sh is not served (HTTP 404)',
        }).map((finding) => finding.status)
      ).toEqual(['pass']);
    });
  });
});
