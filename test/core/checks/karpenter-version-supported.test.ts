import { describe, expect, it } from 'vitest';
import { karpenterVersionSupported } from '../../../lambda/core/checks/karpenter-version-supported.js';
import { ok, unavailable } from '../../../lambda/core/facts/slice.js';
import type { ClusterContext } from '../../../lambda/core/inventory.js';
import { aKarpenterVersion, aNodeClassObject, anInventory } from '../../support/builders.js';

const now = new Date('2026-11-01T12:00:00Z');

function evaluate(
  spec: Record<string, unknown>,
  cluster: Partial<ClusterContext>,
  inputs: ('spec' | 'cluster')[] = ['spec', 'cluster']
) {
  const inventory = anInventory([aNodeClassObject({ spec })], {
    cluster: { name: 'prod', region: 'eu-west-1', ...cluster },
    inputs,
  });
  return karpenterVersionSupported.evaluate(inventory, { now });
}

const v = aKarpenterVersion;
const nameTerm = { amiSelectorTerms: [{ name: 'my-ami-*', owner: 'self' }] };

describe('karpenter-version-supported', () => {
  it('fails with the pending-AMI defect on 1.2.1 for a name selector', () => {
    // Act
    const findings = evaluate(nameTerm, { karpenterVersion: v('1.2.1') });

    // Assess
    const pending = findings.find((finding) => finding.discriminator === 'pending-ami-selected');
    expect(pending?.status).toBe('fail');
    expect(pending?.severity).toBe('medium');
    expect(pending?.message).toContain('state=available');
    expect(pending?.evidence?.fixedIn).toEqual(['1.2.2', '1.3.0']);
  });

  it('passes on 1.2.2 (backport) for a name selector: no defect applies', () => {
    const findings = evaluate(nameTerm, { karpenterVersion: v('1.2.2') });
    expect(findings.map((finding) => finding.status)).toEqual(['pass']);
  });

  it('reports the 412 dry-run noise as an info notice (not a failure) on 1.7 and later, naming only CreateFleet and RunInstances', () => {
    // Act
    const findings = evaluate({}, { karpenterVersion: v('1.7.0') });

    // Assess
    expect(findings.map((finding) => finding.status)).toEqual(['pass', 'notice']);
    const noise = findings.find((finding) => finding.status === 'notice');
    expect(noise?.discriminator).toBe('dry-run-412-noise');
    expect(noise?.resource).toEqual({ cluster: 'prod', kind: 'Cluster', name: 'prod' });
    expect(noise?.severity).toBe('info');
    expect(noise?.message).toContain('aws_sdk_go_request_attempt_duration_seconds');
    expect(noise?.message).toContain('(CreateFleet and RunInstances)');
  });

  it.each([['1.4.1'], ['1.5.5'], ['1.6.4']])(
    'names only CreateFleet and RunInstances on %s, which has the real-launch-template backport (#8408)',
    (version) => {
      const findings = evaluate({}, { karpenterVersion: v(version) });
      const noise = findings.find((finding) => finding.discriminator === 'dry-run-412-noise');
      expect(noise?.message).toContain('(CreateFleet and RunInstances)');
    }
  );

  it.each([['1.4.0'], ['1.5.4'], ['1.6.3']])(
    'still names CreateLaunchTemplate on %s, before the backport',
    (version) => {
      const findings = evaluate({}, { karpenterVersion: v(version) });
      const noise = findings.find((finding) => finding.discriminator === 'dry-run-412-noise');
      expect(noise?.message).toContain('CreateLaunchTemplate, CreateFleet and RunInstances');
    }
  );

  it('reports a controller-wide defect once per cluster even when annotations give several versions', () => {
    // Prepare: two NodeClasses of one cluster, annotated with different Karpenter versions.
    const annotated = (name: string, version: string) =>
      aNodeClassObject({
        name,
        metadata: { annotations: { 'nodeclass-scanner/karpenter-version': version } },
      });
    const inventory = anInventory([annotated('a', '1.6.2'), annotated('b', '1.7.0')], {
      cluster: { name: 'prod', region: 'eu-west-1' },
      inputs: ['spec', 'cluster'],
    });
    // Act
    const noise = karpenterVersionSupported
      .evaluate(inventory, { now })
      .filter((finding) => finding.discriminator === 'dry-run-412-noise');
    // Assess: one finding (one id), naming both versions and both NodeClasses.
    expect(noise).toHaveLength(1);
    expect(noise[0]?.evidence).toMatchObject({
      karpenterVersions: ['1.6.2', '1.7.0'],
      nodeClasses: ['a', 'b'],
    });
    expect(noise[0]?.message).toContain('1.7.0');
  });

  it('does not report dry-run defects when the controller has DISABLE_DRY_RUN=true', () => {
    // Act
    const findings = evaluate(
      {},
      {
        karpenterVersion: v('1.7.0'),
        state: {
          read: ok({ nodeClassCount: 1 }),
          controller: ok({
            namespace: 'kube-system',
            serviceAccount: 'karpenter',
            env: { DISABLE_DRY_RUN: 'true' },
          }),
        },
      }
    );

    // Assess
    expect(findings.map((finding) => finding.status)).toEqual(['pass']);
  });

  it('reports every defect of 1.3.0 that applies', () => {
    // Act
    const findings = evaluate(nameTerm, { karpenterVersion: v('1.3.0') });

    // Assess
    expect(findings.map((finding) => finding.discriminator ?? 'pass').sort()).toEqual([
      'dry-run-412-noise',
      'dry-run-fixed-instance-types',
      'dry-run-without-subnet',
      'pass',
      'validation-rate-limited',
    ]);
    // Real defects fail; only the expected 412 traffic is a notice.
    expect(
      Object.fromEntries(
        findings.map((finding) => [finding.discriminator ?? 'pass', finding.status])
      )
    ).toEqual({
      'dry-run-412-noise': 'notice',
      'dry-run-fixed-instance-types': 'fail',
      'dry-run-without-subnet': 'fail',
      pass: 'pass',
      'validation-rate-limited': 'fail',
    });
  });

  it('reports controller-wide defects once per cluster, listing the NodeClasses, not once per NodeClass', () => {
    // Prepare
    const inventory = anInventory(
      [
        aNodeClassObject({ name: 'a' }),
        aNodeClassObject({ name: 'b' }),
        aNodeClassObject({ name: 'c' }),
      ],
      { cluster: { name: 'prod', karpenterVersion: v('1.7.0') }, inputs: ['spec', 'cluster'] }
    );

    // Act
    const findings = karpenterVersionSupported.evaluate(inventory, { now });

    // Assess
    const noise = findings.filter((finding) => finding.discriminator === 'dry-run-412-noise');
    expect(noise).toHaveLength(1);
    expect(noise[0]?.resource.kind).toBe('Cluster');
    expect(noise[0]?.evidence?.nodeClasses).toEqual(['a', 'b', 'c']);
    expect(findings.filter((finding) => finding.status === 'pass')).toHaveLength(3);
  });

  it('reports the silent instance-profile ARN failure on the newest release', () => {
    // Act
    const findings = evaluate(
      { role: undefined, instanceProfile: 'arn:aws:iam::1:instance-profile/node' },
      { karpenterVersion: v('1.14.1') }
    );

    // Assess
    expect(findings.map((finding) => finding.discriminator)).toContain(
      'instance-profile-arn-silent'
    );
  });

  it('reports the IPv6 metadata defect in an ISO region before 1.7.0 only', () => {
    const before = evaluate({}, { region: 'us-iso-east-1', karpenterVersion: v('1.6.3') });
    const after = evaluate({}, { region: 'us-iso-east-1', karpenterVersion: v('1.7.0') });
    expect(before.map((f) => f.discriminator)).toContain('imds-ipv6-iso-region');
    expect(after.map((f) => f.discriminator)).not.toContain('imds-ipv6-iso-region');
  });

  it('uses the version annotation of a NodeClass over the cluster', () => {
    // Prepare
    const object = aNodeClassObject({
      spec: nameTerm,
      metadata: { annotations: { 'nodeclass-scanner/karpenter-version': '1.1.0' } },
    });
    const inventory = anInventory([object], { cluster: { karpenterVersion: v('1.14.1') } });

    // Act
    const findings = karpenterVersionSupported.evaluate(inventory, { now });

    // Assess
    expect(findings.map((finding) => finding.discriminator)).toContain('pending-ami-selected');
  });

  it('is not applicable in a manifest scan without a version', () => {
    const [finding] = evaluate({}, {}, ['spec']);
    expect(finding?.status).toBe('not-applicable');
    expect(finding?.message).toContain('--karpenter-version');
  });

  it('reports an error when the live controller could not be read', () => {
    // Act
    const [finding] = evaluate(
      {},
      {
        state: {
          read: ok({ nodeClassCount: 1 }),
          controller: unavailable('access-denied', 'deployments.apps is forbidden'),
        },
      }
    );

    // Assess
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('deployments.apps is forbidden');
  });

  it('reports an error when the controller image tag is not a version', () => {
    const [finding] = evaluate(
      {},
      {
        state: {
          read: ok({ nodeClassCount: 1 }),
          controller: ok({
            namespace: 'karpenter',
            serviceAccount: 'karpenter',
            version: 'latest',
          }),
        },
      }
    );
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('image tag "latest" is not a version');
  });

  it('reports an error when no controller Deployment was found', () => {
    const [finding] = evaluate(
      {},
      { state: { read: ok({ nodeClassCount: 1 }), controller: ok(undefined) } }
    );
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('no Karpenter controller Deployment');
  });
});
