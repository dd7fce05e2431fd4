// Two deployments in one account and region (`stackName`): nothing physical is shared, and each
// one's metrics, dashboard and alarms stay its own.
import { describe, expect, it } from 'vitest';
import { AMI_FORWARDING_STACK_SUFFIX, FORWARDING_STACK_SUFFIX } from '../../infra/config.js';
import { METRICS_NAMESPACE } from '../../lambda/shared/telemetry.js';
import { buildApp, FULL_CONTEXT } from './support.js';

/** The property that names each resource type physically; `null`: the type has no such name. */
const PHYSICAL_NAME: Readonly<Record<string, string | null>> = {
  'AWS::SNS::Topic': 'TopicName',
  'AWS::DynamoDB::Table': 'TableName',
  'AWS::SQS::Queue': 'QueueName',
  'AWS::Lambda::Function': 'FunctionName',
  'AWS::Logs::LogGroup': 'LogGroupName',
  'AWS::IAM::Role': 'RoleName',
  'AWS::IAM::ManagedPolicy': 'ManagedPolicyName',
  'AWS::CloudWatch::Dashboard': 'DashboardName',
  'AWS::CloudWatch::Alarm': 'AlarmName',
  'AWS::Events::Rule': 'Name',
  'AWS::KMS::Alias': 'AliasName',
  'AWS::EC2::SecurityGroup': 'GroupName',
  'AWS::Chatbot::SlackChannelConfiguration': 'ConfigurationName',
  // Named within their parent (role, topic, queue, function), or not named at all.
  'AWS::IAM::Policy': null,
  'AWS::SNS::Subscription': null,
  'AWS::SNS::TopicPolicy': null,
  'AWS::SQS::QueuePolicy': null,
  'AWS::Lambda::Permission': null,
  'AWS::Lambda::EventSourceMapping': null,
  'AWS::Lambda::EventInvokeConfig': null,
  'AWS::KMS::Key': null,
  'AWS::CDK::Metadata': null,
  // Keyed by cluster and principal: each deployment's own roles (checked below).
  'AWS::EKS::AccessEntry': null,
};

type Template = {
  Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
};

function deployment(stackName?: string) {
  const built = buildApp({
    ...FULL_CONTEXT,
    ...(stackName === undefined ? {} : { stackName }),
    homeRegion: 'eu-west-1',
    // Clusters discovered in another region too: an AMI forwarding stack there.
    discoverClusters: '*',
    discoveryRegions: ['eu-west-1', 'us-west-2'],
  });
  const templates = [
    built.template,
    built.forwarderTemplate,
    ...built.amiForwarderTemplates.values(),
  ].flatMap((template) => (template === undefined ? [] : [template.toJSON() as Template]));
  return { built, templates };
}

/** Every explicit physical name, as JSON (a literal, or the tokens it is built from). */
function physicalNames(templates: readonly Template[]): string[] {
  return templates.flatMap((template) =>
    Object.values(template.Resources).flatMap(({ Type, Properties }) => {
      expect(PHYSICAL_NAME, `review ${Type} for a physical name`).toHaveProperty([Type]);
      const property = PHYSICAL_NAME[Type];
      const name = property ? Properties?.[property] : undefined;
      return name === undefined ? [] : [JSON.stringify(name)];
    })
  );
}

/** Namespaces the dashboard and alarms read: Insights `FROM`, SEARCH schemas, plain metrics. */
function namespacesRead(templates: readonly Template[]): Set<string | undefined> {
  const text = JSON.stringify(templates);
  return new Set([
    ...[...text.matchAll(/FROM (\w+)/g)].map((match) => match[1]),
    ...[...text.matchAll(/SEARCH\('\{(\w+),/g)].map((match) => match[1]),
    ...[...text.matchAll(/"Namespace":"(\w+)"/g)]
      .map((match) => match[1])
      .filter((namespace) => !namespace?.startsWith('AWS')),
  ]);
}

describe('two deployments in one account and region', () => {
  const prod = deployment();
  const dev = deployment('NodeClassScanner-dev');

  it('name their stacks after stackName', () => {
    expect(prod.built.scanner.stackName).toBe('NodeClassScanner');
    expect(prod.built.forwarder?.stackName).toBe(`NodeClassScanner${FORWARDING_STACK_SUFFIX}`);
    expect(dev.built.scanner.stackName).toBe('NodeClassScanner-dev');
    expect(dev.built.forwarder?.stackName).toBe('NodeClassScanner-devIamEvents');
    expect(prod.built.amiForwarders.get('us-west-2')?.stackName).toBe(
      `NodeClassScanner${AMI_FORWARDING_STACK_SUFFIX}-us-west-2`
    );
    expect(dev.built.amiForwarders.get('us-west-2')?.stackName).toBe(
      'NodeClassScanner-devAmiEvents-us-west-2'
    );
    expect(dev.built.scanner.region).toBe(prod.built.scanner.region);
  });

  it('share no explicit physical name', () => {
    // Act
    const prodNames = physicalNames(prod.templates);
    const devNames = physicalNames(dev.templates);

    // Assess: the Slack channel configuration, the dashboard and the alarms are named, each
    // after its stack (scripts and runbooks name them); nothing else is.
    expect(prodNames.sort()).toEqual(
      [
        'NodeClassScanner',
        'NodeClassScanner-findings',
        'NodeClassScanner-ScanErrors',
        'NodeClassScanner-SourceErrors',
        'NodeClassScanner-NoSuccessfulScan',
        'NodeClassScanner-ScanFailures',
        'NodeClassScanner-ScanDeadLettersNotEmpty',
        'NodeClassScanner-EventDeadLettersNotEmpty',
        'NodeClassScanner-EmailDeliveryDeadLettersNotEmpty',
        'NodeClassScanner-CriticalFinding',
      ]
        .map((name) => JSON.stringify(name))
        .sort()
    );
    expect(devNames).toContain('"NodeClassScanner-dev"');
    expect(devNames).toContain('"NodeClassScanner-dev-findings"');
    for (const name of devNames) expect(name).toMatch(/^"NodeClassScanner-dev(-|")/);
    expect(prodNames.filter((name) => devNames.includes(name))).toEqual([]);
  });

  it('create access entries for their own roles only', () => {
    for (const { templates } of [prod, dev]) {
      const entries = templates.flatMap((template) =>
        Object.values(template.Resources).filter(({ Type }) => Type === 'AWS::EKS::AccessEntry')
      );
      expect(entries.length).toBeGreaterThan(0);
      for (const entry of entries) {
        expect(entry.Properties?.PrincipalArn).toEqual({
          'Fn::GetAtt': [expect.any(String), 'Arn'],
        });
      }
    }
  });

  it('publish and read metrics in their own namespaces', () => {
    // Prepare
    const published = ({ templates }: ReturnType<typeof deployment>) =>
      new Set(
        templates.flatMap((template) =>
          Object.values(template.Resources)
            .filter(({ Type }) => Type === 'AWS::Lambda::Function')
            .map(({ Properties }) => {
              const environment = Properties?.Environment as
                | { Variables: Record<string, string> }
                | undefined;
              return environment?.Variables.POWERTOOLS_METRICS_NAMESPACE;
            })
        )
      );

    // Assess: the default deployment keeps the namespace its metrics always had.
    expect(published(prod)).toEqual(new Set([METRICS_NAMESPACE]));
    expect(published(dev)).toEqual(new Set(['NodeClassScanner_dev']));
    expect(namespacesRead(prod.templates)).toEqual(new Set([METRICS_NAMESPACE]));
    expect(namespacesRead(dev.templates)).toEqual(new Set(['NodeClassScanner_dev']));
  });
});
