import { type App, Validations } from 'aws-cdk-lib';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { buildApp, CDK_JSON_CONTEXT, FULL_CONTEXT } from './support.js';

function acknowledgements(app: App): { path: string; id: string; reason: string }[] {
  const visit = (node: IConstruct): { path: string; id: string; reason: string }[] => [
    ...node.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({
          path: node.node.path,
          id: id.replace(/^annotation::/i, ''),
          reason,
        }))
      ),
    ...node.node.children.flatMap(visit),
  ];
  return visit(app);
}

const CONFIGURATIONS = {
  'the shipped cdk.json': CDK_JSON_CONTEXT,
  'everything configured': FULL_CONTEXT,
  'admin view and DryRun role': {
    ...FULL_CONTEXT,
    eksAdminViewPolicy: true,
    dryRunRoleArn: 'arn:aws:iam::111122223333:role/karpenter-dry-run',
  },
  'home region us-east-1': { ...CDK_JSON_CONTEXT, homeRegion: 'us-east-1' },
  'clusters and discovery in other regions (AMI forwarding stacks)': {
    ...FULL_CONTEXT,
    accessEntries: false,
    clusters: ['prod', 'dr@us-west-2', 'legacy@us-east-1'],
    discoverClusters: '*',
    discoveryRegions: ['eu-west-1', 'ap-southeast-2'],
  },
};

describe('cdk-nag AwsSolutions', () => {
  it.each(Object.entries(CONFIGURATIONS))('reports nothing unacknowledged for %s', (_, context) => {
    // Prepare
    const { app } = buildApp(context);

    // Act
    const report = new AwsSolutionsChecks().validateScope(app);

    // Assess
    const violations = report.violations.map(
      (violation) =>
        `${violation.severity} ${violation.ruleName} at ${violation.violatingResources.map((r) => r.constructPath).join(', ')}`
    );
    expect(violations).toEqual([]);
  });

  it('acknowledges findings granularly, on resources, each with a reason', () => {
    // Act
    const acknowledged = acknowledgements(buildApp(FULL_CONTEXT).app);

    // Assess
    expect(acknowledged.length).toBeGreaterThan(0);
    for (const { path, id, reason } of acknowledged) {
      expect(path.split('/').length, path).toBeGreaterThan(2);
      if (/^AwsSolutions-IAM[45]/.test(id)) expect(id, 'IAM4/IAM5 name the finding').toContain('[');
      expect(reason.length, id).toBeGreaterThan(30);
    }
  });

  it('still catches a violation (the check is live)', () => {
    // Prepare: a queue without DLQ or TLS policy.
    const { app, scanner } = buildApp();
    new Queue(scanner, 'Unprotected');

    // Act
    const rules = new AwsSolutionsChecks().validateScope(app).violations.map((v) => v.ruleName);

    // Assess
    expect(rules).toEqual(expect.arrayContaining(['AwsSolutions-SQS3', 'AwsSolutions-SQS4']));
  });
});
