// EC2 emits `EC2 AMI State Change` in the image's region only: each other region the scanner scans
// gets a stack forwarding them to the home region's bus, built like the IAM forwarding stack.
import { App, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import {
  AmiEventForwarder,
  amiEventForwardingRegions,
} from '../../infra/constructs/ami-event-forwarder.js';
import { AMI_STATE_CHANGE_PATTERN } from '../../infra/event-patterns.js';
import { buildApp, CDK_JSON_CONTEXT, logicalIdOf, resourcesOf } from './support.js';

/** Clusters in two other regions, and discovery in a third (and in one of those two). */
const MULTI_REGION = {
  ...CDK_JSON_CONTEXT,
  homeRegion: 'eu-central-1',
  clusters: ['prod', 'dr@us-west-2', 'edge@eu-west-1'],
  discoverClusters: 'karpenter.sh/discovery',
  discoveryRegions: ['eu-central-1', 'us-west-2', 'ap-southeast-2'],
};

const homeBus = (region: string) => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      `:events:${region}:`,
      { Ref: 'AWS::AccountId' },
      ':event-bus/default',
    ],
  ],
});

function templateOf(built: ReturnType<typeof buildApp>, region: string): Template {
  const template = built.amiForwarderTemplates.get(region);
  if (template === undefined) throw new Error(`no AMI forwarding stack in ${region}`);
  return template;
}

describe('AMI event forwarding stacks', () => {
  const built = buildApp(MULTI_REGION);

  it('are deployed in each region the scanner scans besides home, one stack each, named after it', () => {
    // Assess
    expect([...built.amiForwarders.keys()]).toEqual(['ap-southeast-2', 'eu-west-1', 'us-west-2']);
    for (const [region, stack] of built.amiForwarders) {
      expect(stack.region).toBe(region);
      expect(stack.stackName).toBe(`NodeClassScannerAmiEvents-${region}`);
    }
  });

  it.each(['ap-southeast-2', 'eu-west-1', 'us-west-2'])(
    'forward the home rule’s AMI pattern from %s to the home default bus, as the role, with a DLQ',
    (region) => {
      // Prepare
      const template = templateOf(built, region);
      const roleId = logicalIdOf(template, 'AWS::IAM::Role', 'ForwardingRole');
      const dlqId = logicalIdOf(template, 'AWS::SQS::Queue', 'ForwardingDeadLetters');

      // Assess: the one rule, the pattern the scanner stack's own AMI rule has.
      expect(Object.keys(resourcesOf(template, 'AWS::Events::Rule'))).toHaveLength(1);
      template.hasResourceProperties('AWS::Events::Rule', {
        EventPattern: {
          source: ['aws.ec2'],
          'detail-type': ['EC2 AMI State Change'],
          detail: { State: AMI_STATE_CHANGE_PATTERN.detail?.State },
        },
        State: 'ENABLED',
        Targets: [
          {
            Arn: homeBus('eu-central-1'),
            Id: 'Target0',
            RoleArn: { 'Fn::GetAtt': [roleId, 'Arn'] },
            DeadLetterConfig: { Arn: { 'Fn::GetAtt': [dlqId, 'Arn'] } },
          },
        ],
      });
      built.template.hasResourceProperties('AWS::Events::Rule', {
        EventPattern: {
          source: ['aws.ec2'],
          'detail-type': ['EC2 AMI State Change'],
          detail: { State: AMI_STATE_CHANGE_PATTERN.detail?.State },
        },
      });
    }
  );

  it('grant the forwarding role events:PutEvents on the home bus only, assumable by EventBridge only', () => {
    for (const region of built.amiForwarders.keys()) {
      // Prepare
      const template = templateOf(built, region);
      const roleId = logicalIdOf(template, 'AWS::IAM::Role', 'ForwardingRole');

      // Assess
      const policies = Object.values(resourcesOf(template, 'AWS::IAM::Policy'));
      expect(policies.map((policy) => policy.Properties)).toEqual([
        {
          PolicyDocument: {
            Statement: [
              { Action: 'events:PutEvents', Effect: 'Allow', Resource: homeBus('eu-central-1') },
            ],
            Version: '2012-10-17',
          },
          PolicyName: expect.any(String),
          Roles: [{ Ref: roleId }],
        },
      ]);
      template.hasResourceProperties('AWS::IAM::Role', {
        AssumeRolePolicyDocument: {
          Statement: [
            {
              Action: 'sts:AssumeRole',
              Effect: 'Allow',
              Principal: { Service: 'events.amazonaws.com' },
            },
          ],
        },
      });
      expect(resourcesOf(template, 'AWS::IAM::ManagedPolicy')).toEqual({});
      template.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
    }
  });

  it('hold only the rule, its role and its dead-letter queue (no Lambda, no output)', () => {
    for (const region of built.amiForwarders.keys()) {
      // Prepare
      const json = templateOf(built, region).toJSON() as {
        Resources: Record<string, { Type: string }>;
        Outputs?: unknown;
      };

      // Assess
      expect(
        Object.values(json.Resources)
          .map(({ Type }) => Type)
          .filter((type) => type !== 'AWS::CDK::Metadata')
          .sort()
      ).toEqual([
        'AWS::Events::Rule',
        'AWS::IAM::Policy',
        'AWS::IAM::Role',
        'AWS::SQS::Queue',
        'AWS::SQS::QueuePolicy',
      ]);
      expect(json.Outputs).toBeUndefined();
    }
  });

  it('report nothing unacknowledged to cdk-nag', () => {
    // Act
    const report = new AwsSolutionsChecks().validateScope(built.app);

    // Assess
    expect(report.violations.map((violation) => violation.ruleName)).toEqual([]);
  });

  it('leave the IAM forwarding stack alone, also when us-east-1 is a scanned region', () => {
    // Act
    const withUsEast1 = buildApp({ ...MULTI_REGION, clusters: ['prod', 'legacy@us-east-1'] });

    // Assess: two stacks in us-east-1, each with its own rule.
    expect(withUsEast1.forwarder?.region).toBe('us-east-1');
    expect(withUsEast1.amiForwarders.get('us-east-1')?.stackName).toBe(
      'NodeClassScannerAmiEvents-us-east-1'
    );
    const iamRules = resourcesOf(withUsEast1.forwarderTemplate as Template, 'AWS::Events::Rule');
    expect(Object.values(iamRules).map((rule) => rule.Properties?.EventPattern)).toEqual([
      expect.objectContaining({ source: ['aws.iam'] }),
    ]);
  });

  it('are not created for a scanner of its home region only, nor with amiEvents=false', () => {
    expect(buildApp(CDK_JSON_CONTEXT).amiForwarders.size).toBe(0);
    expect(buildApp({ ...MULTI_REGION, amiEvents: false }).amiForwarders.size).toBe(0);
    expect(buildApp({ ...MULTI_REGION, amiEvents: 'false' }).amiForwarders.size).toBe(0);
  });

  it('follow discovery regions only while discovery is on', () => {
    // Act
    const off = buildApp({ ...MULTI_REGION, discoverClusters: '' });

    // Assess
    expect([...off.amiForwarders.keys()]).toEqual(['eu-west-1', 'us-west-2']);
  });

  it('are named after stackName, so two deployments in one account each have their own', () => {
    // Act
    const dev = buildApp({ ...MULTI_REGION, stackName: 'NodeClassScanner-dev' });

    // Assess
    expect([...dev.amiForwarders.values()].map((stack) => stack.stackName)).toEqual([
      'NodeClassScanner-devAmiEvents-ap-southeast-2',
      'NodeClassScanner-devAmiEvents-eu-west-1',
      'NodeClassScanner-devAmiEvents-us-west-2',
    ]);
  });
});

describe('amiEventForwardingRegions', () => {
  it('lists the regions of name@region clusters and, with discovery, the discovery regions, home left out', () => {
    expect(
      amiEventForwardingRegions({
        homeRegion: 'eu-west-1',
        clusters: ['a', 'b@us-east-2', 'c@eu-west-1', 'd@us-east-2'],
        discoverClusters: '*',
        discoveryRegions: ['eu-west-1', 'ap-south-1'],
      })
    ).toEqual(['ap-south-1', 'us-east-2']);
    expect(
      amiEventForwardingRegions({
        homeRegion: 'eu-west-1',
        clusters: ['a'],
        discoverClusters: '*',
        discoveryRegions: [],
      })
    ).toEqual([]);
  });
});

describe('AmiEventForwarder', () => {
  it('refuses to be deployed in the home region, where events would loop back to their own bus', () => {
    // Prepare
    const stack = new Stack(new App(), 'Home', { env: { region: 'eu-west-1' } });

    // Act & Assess
    expect(() => new AmiEventForwarder(stack, 'Forwarder', { homeRegion: 'eu-west-1' })).toThrow(
      /outside the home region eu-west-1/
    );
  });

  it('refuses a stack without an explicit region', () => {
    // Prepare
    const stack = new Stack(new App(), 'Anywhere');

    // Act & Assess
    expect(() => new AmiEventForwarder(stack, 'Forwarder', { homeRegion: 'eu-west-1' })).toThrow(
      /explicit region/
    );
  });
});
