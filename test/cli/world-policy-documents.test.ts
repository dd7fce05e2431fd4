// `scan --world` with the controller role's policy documents: the policy engine answers its
// simulations (the decision table no longer has a row for it), the other cluster's role keeps the
// table.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ScanReport } from '../../lambda/core/report.js';
import { runCliCaptured, tempTree } from './support/run-cli.js';

const EXAMPLE = join(import.meta.dirname, '../../examples/world.json');
const NOW = new Date('2026-11-22T12:00:00Z');
const ACCOUNT = '111122223333';
const POLICY_ARN = `arn:aws:iam::${ACCOUNT}:policy/KarpenterControllerPolicy-prod-use1`;

const ALLOW_KARPENTER = {
  Sid: 'AllowKarpenter',
  Effect: 'Allow',
  Action: [
    'ec2:*',
    'iam:PassRole',
    'iam:*InstanceProfile',
    'iam:ListInstanceProfiles',
    'ssm:GetParameter',
    'eks:DescribeCluster',
  ],
  Resource: '*',
};
const DENY_ANALYTICS = {
  Sid: 'NoAnalyticsNodeRole',
  Effect: 'Deny',
  Action: 'iam:PassRole',
  Resource: `arn:aws:iam::${ACCOUNT}:role/KarpenterNodeRole-analytics`,
};

/** The example world, with prod's controller policy as a document instead of a table row. */
function worldWithDocuments(document: unknown): string {
  const world = JSON.parse(readFileSync(EXAMPLE, 'utf8')) as {
    iam: Record<string, unknown>;
  };
  world.iam.permissions = [];
  world.iam.policies = [
    {
      Arn: POLICY_ARN,
      PolicyName: 'KarpenterControllerPolicy-prod-use1',
      DefaultVersionId: 'v1',
      Document: document,
    },
  ];
  return JSON.stringify(world);
}

async function scan(world: string, ...argv: string[]) {
  const tree = tempTree({ 'world.json': world });
  try {
    return await runCliCaptured(
      ['scan', '--world', join(tree.dir, 'world.json'), '--format', 'json', ...argv],
      { now: NOW }
    );
  } finally {
    tree.cleanup();
  }
}

function statuses(report: ScanReport, checkId: string): Record<string, string> {
  return Object.fromEntries(
    report.findings
      .filter((finding) => finding.checkId === checkId)
      .map((finding) => [`${finding.resource.cluster}/${finding.resource.name}`, finding.status])
  );
}

describe('scan --world with policy documents', () => {
  it("replays the controller's simulations through the policy engine", async () => {
    // Act
    const run = await scan(
      worldWithDocuments({ Version: '2012-10-17', Statement: [ALLOW_KARPENTER, DENY_ANALYTICS] })
    );

    // Assess
    const report = JSON.parse(run.stdout) as ScanReport;
    expect(report.summary.inputErrors).toEqual([]);
    const passRole = statuses(report, 'controller-can-pass-node-role');
    expect(passRole['prod-use1/analytics']).toBe('fail');
    expect(passRole['prod-use1/default']).toBe('pass');
    const denial = report.findings.find(
      (finding) =>
        finding.checkId === 'controller-can-pass-node-role' && finding.resource.name === 'analytics'
    );
    expect(denial?.message).toContain('explicitly denied by an identity policy');
    expect(denial?.message).toContain('KarpenterControllerPolicy-prod-use1');
    expect(statuses(report, 'controller-can-discover')['prod-use1/default']).toBe('pass');
    // Staging's controller role has no documents: the table (default allowed) still answers.
    expect(statuses(report, 'controller-can-pass-node-role')['staging-use1/default']).toBe('pass');
  });

  it('follows the documents: without the Deny statement the class passes', async () => {
    // Act
    const run = await scan(
      worldWithDocuments({ Version: '2012-10-17', Statement: [ALLOW_KARPENTER] }),
      '--cluster',
      'prod-use1'
    );

    // Assess
    const report = JSON.parse(run.stdout) as ScanReport;
    expect(statuses(report, 'controller-can-pass-node-role')['prod-use1/analytics']).toBe('pass');
  });

  it('fails launch checks the document does not allow, with the statement to add', async () => {
    // Prepare: no EC2 launch actions
    const readOnly = { ...ALLOW_KARPENTER, Action: ALLOW_KARPENTER.Action.slice(1) };

    // Act
    const run = await scan(
      worldWithDocuments({
        Version: '2012-10-17',
        Statement: [readOnly, { Effect: 'Allow', Action: 'ec2:Describe*', Resource: '*' }],
      }),
      '--cluster',
      'prod-use1'
    );

    // Assess
    const report = JSON.parse(run.stdout) as ScanReport;
    const launch = statuses(report, 'controller-can-launch');
    expect(launch['prod-use1/default']).toBe('fail');
    expect(statuses(report, 'controller-can-discover')['prod-use1/default']).toBe('pass');
  });

  it('refuses a malformed document as a usage error naming where it is', async () => {
    // Act
    const run = await scan(
      worldWithDocuments({
        Version: '2012-10-17',
        Statement: [{ ...ALLOW_KARPENTER, Effect: 'Yes' }],
      })
    );

    // Assess
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('iam.policies[0].Document.Statement[0].Effect');
  });
});
