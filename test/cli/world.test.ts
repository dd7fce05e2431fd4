import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ScanReport } from '../../lambda/core/report.js';
import { runCliCaptured, tempTree } from './support/run-cli.js';

const WORLD = join(import.meta.dirname, '../../examples/world.json');
/** Shortly after the example world was recorded (its capacity reservation ends three days later). */
const NOW = new Date('2026-11-22T12:00:00Z');

const cli = (argv: readonly string[]) => runCliCaptured(argv, { now: NOW });

function failures(report: ScanReport, checkId: string): string[] {
  return report.findings
    .filter((finding) => finding.checkId === checkId && finding.status === 'fail')
    .map((finding) => `${finding.resource.cluster}/${finding.resource.name}`)
    .sort();
}

describe('scan --world examples/world.json', () => {
  it('produces every AWS-backed finding the example account is built to show', async () => {
    // Act
    const run = await cli(['scan', '--world', WORLD, '--format', 'json']);

    // Assess
    const report = JSON.parse(run.stdout) as ScanReport;
    expect(run.code).toBe(1);
    expect(report.summary.inputErrors).toEqual([]);
    expect(report.summary.clusters).toEqual(['prod-use1', 'staging-use1']);
    const expected: Record<string, string[]> = {
      'ami-selector-resolves': ['prod-use1/bottlerocket', 'prod-use1/copied', 'prod-use1/golden'],
      // prod-use1 runs a fixed Karpenter, which skips the pending image: a notice there.
      'ami-newest-match-available': ['staging-use1/builds'],
      'ami-not-deprecated': ['prod-use1/legacy'],
      'ami-allowed': ['prod-use1/hardened'],
      'ami-alias-resolves': ['prod-use1/bottlerocket'],
      'ami-ssm-parameter-resolves': ['prod-use1/golden'],
      'root-volume-fits-ami': ['prod-use1/gpu'],
      'subnets-resolve': ['prod-use1/copied'],
      'subnets-have-free-ips': ['prod-use1/edge'],
      'network-single-vpc': ['prod-use1/monitoring', 'prod-use1/shared-name'],
      'security-groups-resolve': ['prod-use1/copied'],
      'security-group-name-unique': ['prod-use1/shared-name'],
      'capacity-reservations-resolve': ['prod-use1/gpu'],
      'instance-profile-exists': ['prod-use1/legacy'],
      // legacy's missing profile is reported by instance-profile-exists only.
      'node-role-valid': ['prod-use1/batch'],
      'node-role-policies': ['staging-use1/builds', 'staging-use1/default'],
      'node-role-can-join': ['prod-use1/analytics'],
      // NodePools (multi-arch, training, reserved-default and the original three are correct).
      'nodepool-nodeclass-exists': ['prod-use1/spot-fleet'],
      // Launchability: each NodePool that launches nothing, whichever step empties its offerings.
      'nodepool-instance-types-offered': [
        'prod-use1/capped',
        'prod-use1/gpu-arm',
        'prod-use1/graviton',
        'prod-use1/memory-optimized',
        'prod-use1/reserved-analytics',
        'prod-use1/zone-d',
      ],
      // Only what launchability leaves: a zone of several without a subnet.
      'nodepool-arch-has-image': [],
      'nodepool-zones-have-subnets': ['prod-use1/zones-c-d'],
      'nodepool-capacity-type-offered': [],
    };
    for (const [checkId, resources] of Object.entries(expected)) {
      expect({ checkId, failing: failures(report, checkId) }).toEqual({
        checkId,
        failing: resources,
      });
    }
  });

  it('fails only the NodePool that cannot launch, beside a healthy control of each case', async () => {
    // Act
    const run = await cli([
      'scan',
      '--world',
      WORLD,
      '--format',
      'json',
      '--cluster',
      'prod-use1',
      '--only',
      'nodepool-instance-types-offered',
    ]);

    // Assess
    const report = JSON.parse(run.stdout) as ScanReport;
    const verdict = (name: string) =>
      report.findings.find((finding) => finding.resource.name === name);
    // arm64 restricted to x86-only families, beside the multi-architecture NodePool.
    expect(verdict('graviton')?.message).toContain(
      'kubernetes.io/arch In [arm64]: 2 → karpenter.sh/capacity-type In [on-demand]: 2 → karpenter.k8s.aws/instance-family In [m7i, c7i]: 0'
    );
    expect(verdict('multi-arch')?.status).toBe('pass');
    // memory: 1000 (bytes) below every type, beside limits with units.
    expect(verdict('capped')?.message).toContain(
      'limits.memory (1000: a quantity without a unit, so 1000 bytes)'
    );
    expect(verdict('general')?.status).toBe('pass');
    // A reservation in us-east-1d, where the class has no subnet, beside one in us-east-1b.
    expect(verdict('reserved-analytics')?.message).toContain(
      'Reservation cr-0c3d4e5f6a7b89013 (m7i.large) is in us-east-1d.'
    );
    expect(verdict('reserved-default')?.message).toContain('m7i.large, in us-east-1b, as reserved');
    expect(verdict('reserved-default')?.status).toBe('pass');
  });

  it('rates the pending newest AMI critical on Karpenter 1.1.2 and an info notice on 1.6.2', async () => {
    // Act
    const run = await cli([
      'scan',
      '--world',
      WORLD,
      '--format',
      'json',
      '--only',
      'ami-newest-match-available',
    ]);

    // Assess
    const report = JSON.parse(run.stdout) as ScanReport;
    const severities = Object.fromEntries(
      report.findings
        .filter((finding) => finding.status === 'fail' || finding.status === 'notice')
        .map((finding) => [
          `${finding.resource.cluster}/${finding.resource.name}`,
          `${finding.severity} ${finding.status}`,
        ])
    );
    expect(severities).toEqual({
      'staging-use1/builds': 'critical fail',
      'prod-use1/platform': 'info notice',
    });
  });

  it('passes the healthy NodeClass on every AWS-backed check', async () => {
    // Act
    const run = await cli(['scan', '--world', WORLD, '--format', 'json', '--cluster', 'prod-use1']);

    // Assess
    const report = JSON.parse(run.stdout) as ScanReport;
    const defaultFindings = report.findings.filter(
      (finding) =>
        finding.resource.name === 'default' &&
        finding.checkId.match(
          /^(ami|subnets|security|network|node-role|instance-profile-exists|root-volume-fits)/
        )
    );
    expect(defaultFindings.length).toBeGreaterThan(10);
    expect(
      defaultFindings.filter(
        (finding) => finding.status !== 'pass' && finding.status !== 'not-applicable'
      )
    ).toEqual([]);
    expect(report.summary.clusters).toEqual(['prod-use1']);
  });

  it('evaluates manifests against the chosen world cluster', async () => {
    // Prepare
    const tree = tempTree({
      'edge.yaml': [
        'apiVersion: karpenter.k8s.aws/v1',
        'kind: EC2NodeClass',
        'metadata: { name: edge-copy }',
        'spec:',
        '  amiSelectorTerms: [{ alias: al2023@v20251103 }]',
        '  role: KarpenterNodeRole-prod-use1',
        '  subnetSelectorTerms: [{ tags: { network: edge } }]',
        '  securityGroupSelectorTerms: [{ tags: { karpenter.sh/discovery: prod-use1 } }]',
        '',
      ].join('\n'),
    });
    try {
      // Act
      const run = await cli([
        'scan',
        '--world',
        WORLD,
        '--cluster',
        'prod-use1',
        '--format',
        'json',
        join(tree.dir, 'edge.yaml'),
      ]);

      // Assess
      const report = JSON.parse(run.stdout) as ScanReport;
      expect(failures(report, 'subnets-have-free-ips')).toEqual(['prod-use1/edge-copy']);
      expect(failures(report, 'ami-alias-resolves')).toEqual([]);
      expect(report.summary.nodeClasses).toBe(1);
    } finally {
      tree.cleanup();
    }
  });

  it('refuses manifests without --cluster when the world holds several clusters', async () => {
    // Prepare
    const tree = tempTree({ 'a.yaml': 'kind: ConfigMap\napiVersion: v1\n' });
    try {
      // Act
      const run = await cli(['scan', '--world', WORLD, join(tree.dir, 'a.yaml')]);

      // Assess
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('prod-use1, staging-use1');
      expect(run.stderr).toContain('--cluster');
    } finally {
      tree.cleanup();
    }
  });

  it('names the JSON path of a malformed world file and exits 2', async () => {
    // Prepare
    const tree = tempTree({
      'bad.json': JSON.stringify({
        version: 1,
        account: '111122223333',
        region: 'us-east-1',
        ec2: { images: [{ Name: 'no id' }] },
      }),
      'not-json.json': '{ "version": 1,',
    });
    try {
      // Act
      const bad = await cli(['scan', '--world', join(tree.dir, 'bad.json')]);
      const notJson = await cli(['scan', '--world', join(tree.dir, 'not-json.json')]);
      const missing = await cli(['scan', '--world', join(tree.dir, 'missing.json')]);

      // Assess
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('ec2.images[0].ImageId');
      expect(bad.stderr).not.toContain('internal error');
      expect(notJson.code).toBe(2);
      expect(notJson.stderr).toContain('not valid JSON');
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('no such file');
    } finally {
      tree.cleanup();
    }
  });

  it('rejects a --controller-role for a cluster the world does not hold', async () => {
    // Act
    const run = await cli([
      'scan',
      '--world',
      WORLD,
      '--controller-role',
      'prod-use2=arn:aws:iam::111122223333:role/KarpenterControllerRole-prod-use1',
    ]);

    // Assess
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--controller-role "prod-use2"');
  });

  it('rejects a --cluster that the world does not hold', async () => {
    // Act
    const run = await cli(['scan', '--world', WORLD, '--cluster', 'nope']);

    // Assess
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('"nope" not in the world file');
  });
});

describe('scan --world: the Spot service-linked role', () => {
  const SPOT_ROLE = 'AWSServiceRoleForEC2Spot';
  const SPOT_ROLE_ARN = `arn:aws:iam::111122223333:role/aws-service-role/spot.amazonaws.com/${SPOT_ROLE}`;

  /** The example world without the Spot role, and with `rows` in its decision table. */
  function worldWithoutSpotRole(rows: readonly object[]): string {
    const world = JSON.parse(readFileSync(WORLD, 'utf8')) as {
      iam: { roles: { RoleName: string }[]; permissions: object[] };
    };
    world.iam.roles = world.iam.roles.filter((role) => role.RoleName !== SPOT_ROLE);
    world.iam.permissions = [...rows, ...world.iam.permissions];
    return JSON.stringify(world);
  }

  const spotFindings = (report: ScanReport) =>
    report.findings.filter(
      (finding) =>
        finding.checkId === 'nodepool-spot-service-linked-role' &&
        finding.status !== 'not-applicable'
    );

  it('passes the Spot NodePool of the example, whose account has the role', async () => {
    const run = await cli(['scan', '--world', WORLD, '--cluster', 'prod-use1', '--format', 'json']);

    const report = JSON.parse(run.stdout) as ScanReport;
    expect(spotFindings(report).map((f) => `${f.resource.name} ${f.status}`)).toEqual([
      'multi-arch pass',
    ]);
  });

  it('fails the Spot NodePool when the role is absent and the controller may not create it', async () => {
    // Prepare
    const tree = tempTree({
      'world.json': worldWithoutSpotRole([
        {
          principal: 'KarpenterControllerRole-prod-use1',
          action: 'iam:CreateServiceLinkedRole',
          resource: SPOT_ROLE_ARN,
          decision: 'implicitDeny',
        },
      ]),
    });
    try {
      // Act
      const run = await cli([
        'scan',
        '--world',
        join(tree.dir, 'world.json'),
        '--cluster',
        'prod-use1',
        '--format',
        'json',
      ]);

      // Assess
      const report = JSON.parse(run.stdout) as ScanReport;
      const [finding, ...more] = spotFindings(report);
      expect(more).toEqual([]);
      expect(finding).toMatchObject({
        status: 'fail',
        severity: 'critical',
        resource: { kind: 'NodePool', name: 'multi-arch' },
      });
      expect(finding?.remediation).toContain(
        'aws iam create-service-linked-role --aws-service-name spot.amazonaws.com'
      );
      // The launch itself is allowed: the verdict stays with this check.
      expect(failures(report, 'controller-can-launch')).toEqual(
        failures(
          JSON.parse(
            (await cli(['scan', '--world', WORLD, '--cluster', 'prod-use1', '--format', 'json']))
              .stdout
          ) as ScanReport,
          'controller-can-launch'
        )
      );
    } finally {
      tree.cleanup();
    }
  });

  it('passes when the role is absent but the controller may create it', async () => {
    const tree = tempTree({ 'world.json': worldWithoutSpotRole([]) });
    try {
      const run = await cli([
        'scan',
        '--world',
        join(tree.dir, 'world.json'),
        '--cluster',
        'prod-use1',
        '--format',
        'json',
      ]);

      const report = JSON.parse(run.stdout) as ScanReport;
      const [finding] = spotFindings(report);
      expect(finding?.status).toBe('pass');
      expect(finding?.message).toContain('the first Spot launch creates it');
    } finally {
      tree.cleanup();
    }
  });
});
