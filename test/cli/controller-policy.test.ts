// `scan --controller-policy FILE… [--permissions-boundary FILE]`: Karpenter's reference controller
// policy, rendered to files as a platform team would keep it, checked against manifests before it is
// applied, and against a world file whose own table and documents it replaces.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_FINDINGS, EXIT_OK, EXIT_USAGE } from '../../lambda/cli/main.js';
import type { NamedPolicy } from '../../lambda/core/facts/permissions.js';
import type { Finding } from '../../lambda/core/model.js';
import type { ScanReport } from '../../lambda/core/report.js';
import {
  policyVariants,
  referenceControllerPolicies,
} from '../support/karpenter-controller-policy.js';
import { ReportContract } from './support/report-contract.js';
import { runCliCaptured, useTempTrees } from './support/run-cli.js';

const ACCOUNT = '111122223333';
const CONTROLLER = `arn:aws:iam::${ACCOUNT}:role/KarpenterControllerRole-demo`;
const CLUSTER_FLAGS = ['--region', 'us-east-1', '--controller-role', `demo=${CONTROLLER}`];
const GOOD_AL2023 = readFileSync(
  join(import.meta.dirname, '../../examples/nodeclasses/good-al2023.yaml'),
  'utf8'
);
/** The example's class and NodePool again as `batch`: two healthy classes of one cluster. */
const BATCH = GOOD_AL2023.replaceAll('default-al2023', 'batch').replace(
  'name: default\n',
  'name: batch\n'
);
const CONTROLLER_CHECKS = [
  'controller-can-launch',
  'controller-can-pass-node-role',
  'controller-can-manage-instance-profile',
  'controller-can-discover',
];
const EXAMPLE_WORLD = join(import.meta.dirname, '../../examples/world.json');

/** The parts of a world file the tests edit. */
interface WorldJson {
  iam: Record<string, unknown>;
  organizations?: unknown;
}

const tree = useTempTrees();

/** v1.14.1's reference policies for cluster `demo`, as deployed (the template's node role). */
function reference(): NamedPolicy[] {
  return referenceControllerPolicies('v1.14.1', {
    partition: 'aws',
    region: 'us-east-1',
    accountId: ACCOUNT,
    clusterName: 'demo',
  });
}

/** The manifests and each policy in its own file; the flags naming the policies. */
function workspace(
  policies: readonly NamedPolicy[],
  extra: Readonly<Record<string, string>> = {}
): { dir: string; flags: string[] } {
  const dir = tree({
    'k8s/default.yaml': GOOD_AL2023,
    'k8s/batch.yaml': BATCH,
    ...Object.fromEntries(policies.map((policy) => [`iam/${policy.name}.json`, policy.document])),
    ...extra,
  });
  return {
    dir,
    flags: policies.flatMap((policy) => [
      '--controller-policy',
      join(dir, 'iam', `${policy.name}.json`),
    ]),
  };
}

async function scan(argv: readonly string[]) {
  const run = await runCliCaptured(['scan', '--format', 'json', ...argv]);
  const report =
    run.stdout === '' ? undefined : (ReportContract.parse(JSON.parse(run.stdout)) as ScanReport);
  return { ...run, report };
}

function controllerFindings(report: ScanReport | undefined): Finding[] {
  return (report?.findings ?? []).filter((finding) => CONTROLLER_CHECKS.includes(finding.checkId));
}

function statuses(report: ScanReport | undefined, checkId: string): Record<string, string> {
  return Object.fromEntries(
    (report?.findings ?? [])
      .filter((finding) => finding.checkId === checkId)
      .map((finding) => [finding.resource.name, finding.status])
  );
}

describe('scan manifests --controller-policy', () => {
  it("passes every controller check of healthy classes under Karpenter's reference policy", async () => {
    // Prepare
    const { dir, flags } = workspace(reference());

    // Act
    const run = await scan([join(dir, 'k8s'), ...CLUSTER_FLAGS, ...flags, '--fail-on', 'critical']);

    // Assess
    expect(run.stderr).toBe('');
    expect(run.code).toBe(EXIT_OK);
    const findings = controllerFindings(run.report);
    expect(findings.map((finding) => `${finding.resource.name} ${finding.checkId}`).sort()).toEqual(
      ['batch', 'default-al2023']
        .flatMap((name) => CONTROLLER_CHECKS.map((id) => `${name} ${id}`))
        .sort()
    );
    expect(findings.every((finding) => finding.status === 'pass')).toBe(true);
    expect(findings.every((finding) => finding.resource.cluster === 'demo')).toBe(true);
    // Only the permission checks had their input: the AWS-backed ones are listed as not run.
    expect(run.report?.summary.notRun.map((entry) => entry.checkId)).toContain('subnets-resolve');
    expect(run.report?.summary.notRun.map((entry) => entry.checkId)).not.toContain(
      'controller-can-launch'
    );
  });

  it('says where the verdicts come from, and that the launch ran on wildcard resource ARNs', async () => {
    // Prepare
    const { dir, flags } = workspace(reference());

    // Act
    const run = await scan([join(dir, 'k8s/default.yaml'), ...CLUSTER_FLAGS, ...flags]);

    // Assess
    const launch = run.report?.findings.find((f) => f.checkId === 'controller-can-launch');
    const notes = launch?.evidence.notes as string[];
    expect(notes[0]).toContain(
      '--controller-policy KarpenterControllerNodeLifecyclePolicy-demo.json'
    );
    expect(notes[0]).toContain('@cloud-copilot/iam-simulate');
    expect(notes[1]).toContain('wildcard ARNs');
    expect(launch?.message).toContain('simulated on wildcard ARNs');
    const passRole = run.report?.findings.find(
      (f) => f.checkId === 'controller-can-pass-node-role'
    );
    expect(passRole?.evidence.notes).toEqual([notes[0]]);
  });

  it('fails exactly the class a Deny by its ec2nodeclass tag names, exiting 1 at critical', async () => {
    // Prepare
    const { dir, flags } = workspace(policyVariants.denyNodeClassByTag(reference(), 'batch'));

    // Act
    const run = await scan([join(dir, 'k8s'), ...CLUSTER_FLAGS, ...flags, '--fail-on', 'critical']);

    // Assess
    expect(run.code).toBe(EXIT_FINDINGS);
    const failing = controllerFindings(run.report).filter((finding) => finding.status !== 'pass');
    expect(
      failing.map((finding) => [finding.resource.name, finding.checkId, finding.status])
    ).toEqual([['batch', 'controller-can-launch', 'fail']]);
    expect(failing[0]?.message).toContain(
      'explicitly denied by an identity policy (matched: KarpenterControllerNodeLifecyclePolicy-demo.json)'
    );
  });

  it('fails pass-node-role under a boundary without iam:PassRole, naming the boundary', async () => {
    // Prepare
    const boundary = policyVariants.boundaryWithoutPassRole();
    const { dir, flags } = workspace(reference(), { 'iam/boundary.json': boundary.document });

    // Act
    const run = await scan([
      join(dir, 'k8s'),
      ...CLUSTER_FLAGS,
      ...flags,
      '--permissions-boundary',
      join(dir, 'iam/boundary.json'),
    ]);

    // Assess
    expect(run.code).toBe(EXIT_FINDINGS);
    expect(statuses(run.report, 'controller-can-pass-node-role')).toEqual({
      batch: 'fail',
      'default-al2023': 'fail',
    });
    expect(statuses(run.report, 'controller-can-launch')).toEqual({
      batch: 'pass',
      'default-al2023': 'pass',
    });
    const denial = run.report?.findings.find((f) => f.checkId === 'controller-can-pass-node-role');
    expect(denial?.message).toContain("denied by the role's permissions boundary boundary.json");
    expect(denial?.evidence.notes).toEqual([
      expect.stringContaining('--permissions-boundary boundary.json'),
    ]);
  });

  it('refuses a malformed policy file with exit 2, naming the file and the problem', async () => {
    // Prepare
    const [first, ...rest] = reference();
    const broken = JSON.parse(first?.document ?? '{}') as { Statement: { Effect: string }[] };
    if (broken.Statement[0]) broken.Statement[0].Effect = 'Permit';
    const { dir, flags } = workspace([
      { name: first?.name ?? 'first', document: JSON.stringify(broken) },
      ...rest,
    ]);

    // Act
    const run = await scan([join(dir, 'k8s'), ...CLUSTER_FLAGS, ...flags]);

    // Assess
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `nodeclass-scan: --controller-policy ${join(dir, 'iam', `${first?.name}.json`)}: not a valid identity policy: Statement[0].Effect: Invalid option: expected one of "Allow"|"Deny"\n`
    );
  });

  it('refuses CloudFormation placeholders left in a file, saying to render it', async () => {
    // Prepare: the fixture's document before the template's substitutions
    const dir = tree({ 'k8s/default.yaml': GOOD_AL2023 });
    const fixture = JSON.parse(
      readFileSync(
        join(import.meta.dirname, '../fixtures/karpenter-controller-policy/v1.14.1.json'),
        'utf8'
      )
    ) as { policies: { document: unknown }[] };
    writeFileSync(join(dir, 'raw.json'), JSON.stringify(fixture.policies[0]?.document));

    // Act
    const run = await scan([
      join(dir, 'k8s'),
      ...CLUSTER_FLAGS,
      '--controller-policy',
      join(dir, 'raw.json'),
    ]);

    // Assess
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.stderr).toContain(
      `--controller-policy ${join(dir, 'raw.json')}: template placeholders`
    );
    expect(run.stderr).toContain(`\${AWS::Partition}`);
    expect(run.stderr).toContain('render the template first');
  });

  it.each([
    [
      'a boundary without policies',
      ['--region', 'us-east-1', '--permissions-boundary', 'b.json'],
      '--permissions-boundary is simulated with the documents of --controller-policy',
    ],
    [
      'no controller role',
      ['--region', 'us-east-1', '--controller-policy', 'p.json'],
      '--controller-policy on manifests needs the cluster and its controller role: add --controller-role CLUSTER=',
    ],
    [
      'no region',
      ['--controller-role', `demo=${CONTROLLER}`, '--controller-policy', 'p.json'],
      '--controller-policy on manifests needs --region',
    ],
    [
      'two controller roles',
      [
        ...CLUSTER_FLAGS,
        '--controller-role',
        `other=${CONTROLLER}`,
        '--controller-policy',
        'p.json',
      ],
      'checks one cluster: give one --controller-role',
    ],
    [
      'a role of another partition',
      [
        '--region',
        'cn-north-1',
        '--controller-role',
        `demo=${CONTROLLER}`,
        '--controller-policy',
        'p.json',
      ],
      'is not in partition aws-cn of region cn-north-1',
    ],
  ])('is a usage error with %s', async (_case, flags, message) => {
    // Prepare
    const dir = tree({ 'k8s/default.yaml': GOOD_AL2023 });

    // Act
    const run = await scan([join(dir, 'k8s'), ...flags]);

    // Assess
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.stderr).toContain(message);
  });
});

describe('scan --controller-policy, paths after the flag', () => {
  it('says the flag took them, when no manifest path is left', async () => {
    // Prepare
    const { dir, flags } = workspace(reference());

    // Act: the files, then the manifests, all after --controller-policy
    const run = await scan([...CLUSTER_FLAGS, ...flags.slice(0, 2), join(dir, 'k8s')]);

    // Assess
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.stderr).toContain(
      '--controller-policy takes every argument up to the next flag: give manifest paths before it'
    );
  });
});

describe('scan --world --controller-policy', () => {
  const ALLOW_ALL = JSON.stringify({
    Version: '2012-10-17',
    Statement: [{ Sid: 'AllowAll', Effect: 'Allow', Action: '*', Resource: '*' }],
  });

  it("replaces the world's decision table for the controller role", async () => {
    // Prepare: the example world's table denies PassRole on analytics' node role
    const dir = tree({ 'allow-all.json': ALLOW_ALL });
    const before = await scan(['--world', EXAMPLE_WORLD, '--cluster', 'prod-use1']);

    // Act
    const run = await scan([
      '--world',
      EXAMPLE_WORLD,
      '--cluster',
      'prod-use1',
      '--controller-policy',
      join(dir, 'allow-all.json'),
    ]);

    // Assess
    expect(statuses(before.report, 'controller-can-pass-node-role').analytics).toBe('fail');
    expect(run.report?.summary.inputErrors).toEqual([]);
    expect(statuses(run.report, 'controller-can-pass-node-role').analytics).toBe('pass');
    const discover = run.report?.findings.find(
      (finding) =>
        finding.checkId === 'controller-can-discover' && finding.resource.name === 'default'
    );
    expect(discover?.status).toBe('pass');
    expect(discover?.evidence.notes).toEqual([
      expect.stringContaining('No service control policy is evaluated (the world file has none)'),
    ]);
  });

  it("replaces the world's own policy documents, and keeps its SCPs", async () => {
    // Prepare: prod's controller role with a document denying PassRole on analytics' node role, and
    // an SCP denying every launch
    const world = JSON.parse(readFileSync(EXAMPLE_WORLD, 'utf8')) as WorldJson;
    world.iam.permissions = [];
    world.iam.policies = [
      {
        Arn: `arn:aws:iam::${ACCOUNT}:policy/KarpenterControllerPolicy-prod-use1`,
        PolicyName: 'KarpenterControllerPolicy-prod-use1',
        Document: {
          Version: '2012-10-17',
          Statement: [
            { Effect: 'Allow', Action: '*', Resource: '*' },
            {
              Effect: 'Deny',
              Action: 'iam:PassRole',
              Resource: `arn:aws:iam::${ACCOUNT}:role/KarpenterNodeRole-analytics`,
            },
          ],
        },
      },
    ];
    const dir = tree({ 'world.json': JSON.stringify(world), 'allow-all.json': ALLOW_ALL });
    world.organizations = {
      scps: [
        {
          Id: 'p-nolaunch',
          Document: {
            Version: '2012-10-17',
            Statement: [
              { Effect: 'Allow', Action: '*', Resource: '*' },
              { Effect: 'Deny', Action: 'ec2:RunInstances', Resource: '*' },
            ],
          },
        },
      ],
    };
    writeFileSync(join(dir, 'world-scp.json'), JSON.stringify(world));
    const flags = ['--cluster', 'prod-use1', '--controller-policy', join(dir, 'allow-all.json')];

    // Act
    const before = await scan(['--world', join(dir, 'world.json'), '--cluster', 'prod-use1']);
    const run = await scan(['--world', join(dir, 'world.json'), ...flags]);
    const withScp = await scan(['--world', join(dir, 'world-scp.json'), ...flags]);

    // Assess
    expect(statuses(before.report, 'controller-can-pass-node-role').analytics).toBe('fail');
    expect(statuses(run.report, 'controller-can-pass-node-role').analytics).toBe('pass');
    expect(statuses(run.report, 'controller-can-launch').default).toBe('pass');
    const launch = withScp.report?.findings.find(
      (finding) =>
        finding.checkId === 'controller-can-launch' && finding.resource.name === 'default'
    );
    expect(launch?.status).toBe('fail');
    expect(launch?.message).toContain('service control policy');
    expect(launch?.evidence.notes).toEqual([
      expect.stringContaining("The world file's service control policies apply"),
    ]);
  });
});
