// A security-group listing whose NextToken alternates (A, B, A, …) must not pass for the account's
// groups: the slice is unavailable naming the listing, and the checks fed by it report `error`.
import { join } from 'node:path';
import { DescribeSecurityGroupsCommand, EC2Client } from '@aws-sdk/client-ec2';
import { IAMClient } from '@aws-sdk/client-iam';
import { SSMClient } from '@aws-sdk/client-ssm';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createLiveAwsFacts } from '../../../lambda/adapters/aws/aws-facts-adapter.js';
import { createAwsFactsEnricher } from '../../../lambda/app/collect-aws-facts.js';
import { CHECKS } from '../../../lambda/core/checks/index.js';
import { runChecks } from '../../../lambda/core/evaluate.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import { emptyInventory, nodeClassKey } from '../../../lambda/core/inventory.js';
import type { ScanReport } from '../../../lambda/core/report.js';
import { answerEdgeResources, EDGE_MANIFEST } from '../../cli/support/edge-manifest.js';
import { runCliCaptured, tempTree } from '../../cli/support/run-cli.js';
import { aClusterFacts, SCAN_TIME } from '../../support/aws-builders.js';
import { aNodeClassEntry, aNodeClassObject } from '../../support/builders.js';

const ec2 = mockClient(EC2Client);
const iam = mockClient(IAMClient);
const ssm = mockClient(SSMClient);
const sts = mockClient(STSClient);

/** Every check fed by the NodeClass's security groups. */
const SECURITY_GROUP_CHECKS = [
  'network-single-vpc',
  'security-group-name-unique',
  'security-groups-resolve',
];
const LOOP_MESSAGE =
  'ec2:DescribeSecurityGroups pagination repeated an earlier token after 3 pages';

/** The edge class selecting its group by name, so both security-group checks have work. */
const BY_NAME_MANIFEST = EDGE_MANIFEST.replace(
  'securityGroupSelectorTerms: [{ tags: { karpenter.sh/discovery: demo } }]',
  'securityGroupSelectorTerms: [{ name: nodes }]'
);

/** DescribeSecurityGroups going round: a new group on every page, tokens A, B, A, B, … */
function answerAlternatingTokens(): void {
  let served = 0;
  ec2.on(DescribeSecurityGroupsCommand).callsFake(async (input: { NextToken?: string }) => {
    served += 1;
    return {
      SecurityGroups: [{ GroupId: `sg-${served}`, GroupName: `nodes-${served}`, VpcId: 'vpc-1' }],
      NextToken: input.NextToken === 'A' ? 'B' : 'A',
    };
  });
}

beforeEach(() => {
  for (const mock of [ec2, iam, ssm, sts]) mock.reset();
  answerEdgeResources(ec2, iam);
  // Registered last: it replaces the edge answer for this command.
  answerAlternatingTokens();
  sts.on(GetCallerIdentityCommand).resolves({
    Account: '111122223333',
    Arn: 'arn:aws:sts::111122223333:assumed-role/Auditor/session',
  });
});

afterAll(() => {
  for (const mock of [ec2, iam, ssm, sts]) mock.restore();
});

describe('an alternating DescribeSecurityGroups token', () => {
  it('makes the security-group slice unavailable and its checks report error', async () => {
    // Prepare
    const port = createLiveAwsFacts({
      ec2: new EC2Client({ region: 'us-east-1' }),
      ssm: new SSMClient({ region: 'us-east-1' }),
      iam: new IAMClient({ region: 'us-east-1' }),
    });
    const raw = aNodeClassObject({
      spec: {
        amiSelectorTerms: [{ id: 'ami-0123456789abcdef0' }],
        securityGroupSelectorTerms: [{ name: 'nodes' }],
      },
    });
    const inventory = emptyInventory({
      clusters: [{ name: 'demo', partition: 'aws', region: 'us-east-1', aws: ok(aClusterFacts()) }],
      nodeClasses: [aNodeClassEntry(raw, 'demo')],
    });

    // Act
    const enriched = await createAwsFactsEnricher({ port, now: SCAN_TIME }).enrich(inventory);
    const { findings } = runChecks(
      enriched,
      CHECKS.filter((check) => SECURITY_GROUP_CHECKS.includes(check.id)),
      { now: SCAN_TIME }
    );

    // Assess: three calls (not 1,000), then no verdict on the groups read so far
    expect(ec2.commandCalls(DescribeSecurityGroupsCommand)).toHaveLength(3);
    const slice = enriched.awsFacts.get(nodeClassKey('demo', 'default'))?.securityGroups;
    expect(slice).toMatchObject({ status: 'unavailable', reason: 'invalid-response' });
    expect(slice?.status === 'unavailable' && slice.message).toContain(LOOP_MESSAGE);
    expect(findings.map((finding) => [finding.checkId, finding.status]).sort()).toEqual(
      SECURITY_GROUP_CHECKS.map((id) => [id, 'error'])
    );
    for (const finding of findings) expect(finding.message).toContain(LOOP_MESSAGE);
  });

  it('gives `scan --aws` error findings naming the listing, never a pass on partial groups', async () => {
    // Prepare
    const tree = tempTree({ 'edge.yaml': BY_NAME_MANIFEST });
    expect(BY_NAME_MANIFEST).not.toBe(EDGE_MANIFEST);
    try {
      // Act
      const run = await runCliCaptured(
        ['scan', '--aws', '--region', 'us-east-1', '--format', 'json', join(tree.dir, 'edge.yaml')],
        { now: new Date('2026-11-22T12:00:00Z') }
      );

      // Assess
      const report = JSON.parse(run.stdout) as ScanReport;
      const groupFindings = report.findings.filter((finding) =>
        SECURITY_GROUP_CHECKS.includes(finding.checkId)
      );
      expect(groupFindings.map((finding) => [finding.checkId, finding.status]).sort()).toEqual(
        SECURITY_GROUP_CHECKS.map((id) => [id, 'error'])
      );
      for (const finding of groupFindings) expect(finding.message).toContain(LOOP_MESSAGE);
      // Unrelated reads still conclude: the subnet check has its verdict.
      expect(report.findings.find((finding) => finding.checkId === 'subnets-resolve')?.status).toBe(
        'pass'
      );
    } finally {
      tree.cleanup();
    }
  });
});
