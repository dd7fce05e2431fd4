import { Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import {
  DRY_RUN_ONLY_ACTIONS,
  declaredActions,
  type PermissionScope,
  scannerPolicyStatements,
  wildcardReasons,
} from '../../infra/permissions.js';
import { DECLARED_ACTIONS } from '../../lambda/adapters/aws/declared-actions.js';
import { actionsOf, buildApp, FULL_CONTEXT, logicalIdOf, resourcesOf } from './support.js';

const SCOPE: PermissionScope = {
  partition: 'aws',
  account: '111122223333',
  topicArn: 'arn:aws:sns:eu-west-1:111122223333:findings',
  tableArn: 'arn:aws:dynamodb:eu-west-1:111122223333:table/state',
  queueArn: 'arn:aws:sqs:eu-west-1:111122223333:scans',
};

function statementsJson(registry: Record<string, readonly string[]>, scope = SCOPE) {
  const stack = new Stack();
  return scannerPolicyStatements(registry, scope).map((statement) =>
    stack.resolve(statement.toStatementJson())
  ) as { Action: string | string[]; Resource: string | string[] }[];
}

function resourcesFor(action: string, registry: Record<string, readonly string[]>, scope = SCOPE) {
  const statement = statementsJson(registry, scope).find((candidate) =>
    [candidate.Action].flat().includes(action)
  );
  return statement === undefined ? undefined : [statement.Resource].flat();
}

describe('scanner role policy', () => {
  const { template } = buildApp();
  const policies = resourcesOf(template, 'AWS::IAM::Policy');
  const scannerPolicyId = logicalIdOf(template, 'AWS::IAM::Policy', 'ScannerPolicy');
  const granted = actionsOf(policies[scannerPolicyId]?.Properties?.PolicyDocument);

  it('grants exactly the actions the adapters declare, no more and no fewer', () => {
    // Prepare
    const declared = declaredActions(DECLARED_ACTIONS).filter(
      (action) => !DRY_RUN_ONLY_ACTIONS.includes(action)
    );

    // Assess
    expect(declared.length).toBeGreaterThan(0);
    expect([...new Set(granted)].sort()).toEqual([...declared].sort());
    expect(granted).toHaveLength(new Set(granted).size);
  });

  it('attaches the generated policy to the role the Lambdas run as', () => {
    // Prepare
    const roleId = logicalIdOf(template, 'AWS::IAM::Role', 'ScannerRole');

    // Assess
    expect(policies[scannerPolicyId]?.Properties?.Roles).toEqual([{ Ref: roleId }]);
    for (const fn of Object.values(resourcesOf(template, 'AWS::Lambda::Function'))) {
      expect(fn.Properties?.Role).toEqual({ 'Fn::GetAtt': [roleId, 'Arn'] });
    }
  });

  it('adds only the wiring CDK needs besides it: logs, its own queues', () => {
    // Act
    const wiring = Object.entries(policies)
      .filter(([id]) => id !== scannerPolicyId)
      .flatMap(([, policy]) => actionsOf(policy.Properties?.PolicyDocument));

    // Assess
    expect([...new Set(wiring)].sort()).toEqual([
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ReceiveMessage',
      'sqs:SendMessage',
    ]);
  });

  it('never lets the scanner role mutate EC2 or assume roles without DryRun mode', () => {
    // Prepare: everything on, except the VPC (checked below).
    const { vpcId: _vpc, subnetIds: _subnets, ...context } = FULL_CONTEXT;
    const all = Object.values(buildApp(context).template.findResources('AWS::IAM::Policy')).flatMap(
      (policy) => actionsOf(policy.Properties.PolicyDocument)
    );

    // Assess
    expect(all.filter((action) => action.startsWith('ec2:'))).toEqual(
      all.filter((action) => /^ec2:(Describe|Get)/.test(action))
    );
    expect(all.filter((action) => action.startsWith('sts:Assume'))).toEqual([]);
    expect(all.filter((action) => action.includes('*'))).toEqual([]);
  });

  it('attaches no managed policy, except Lambda’s VPC access policy when a VPC is configured', () => {
    // Prepare
    const roleOf = (t: typeof template) =>
      resourcesOf(t, 'AWS::IAM::Role')[logicalIdOf(t, 'AWS::IAM::Role', 'ScannerRole')];

    // Assess
    expect(roleOf(template)?.Properties?.ManagedPolicyArns).toBeUndefined();
    expect(
      JSON.stringify(roleOf(buildApp(FULL_CONTEXT).template)?.Properties?.ManagedPolicyArns)
    ).toBe(
      JSON.stringify([
        {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole',
            ],
          ],
        },
      ])
    );
  });

  it('scopes policy simulation to role ARNs', () => {
    expect(
      resourcesFor('iam:SimulatePrincipalPolicy', { permissions: ['iam:SimulatePrincipalPolicy'] })
    ).toEqual(['arn:aws:iam::111122223333:role/*']);
  });

  it('scopes publishing and state to the scanner’s own topic, table and queue', () => {
    // Prepare
    const registry = {
      publish: ['sns:Publish'],
      state: ['dynamodb:PutItem', 'dynamodb:Query'],
      queue: ['sqs:SendMessage'],
    };

    // Assess
    expect(resourcesFor('sns:Publish', registry)).toEqual([SCOPE.topicArn]);
    expect(resourcesFor('dynamodb:Query', registry)).toEqual([
      SCOPE.tableArn,
      `${SCOPE.tableArn}/index/*`,
    ]);
    expect(resourcesFor('sqs:SendMessage', registry)).toEqual([SCOPE.queueArn]);
  });

  it('grants sts:AssumeRole only on the DryRun role, and only when DryRun mode is on', () => {
    // Prepare
    const registry = { dryRun: ['sts:AssumeRole'] };
    const dryRunRoleArn = 'arn:aws:iam::111122223333:role/karpenter-dry-run';

    // Assess
    expect(statementsJson(registry)).toEqual([]);
    expect(resourcesFor('sts:AssumeRole', registry, { ...SCOPE, dryRunRoleArn })).toEqual([
      dryRunRoleArn,
    ]);
  });

  it.each(['ec2:RunInstances', 'ec2:CreateFleet', 'iam:PassRole', 's3:GetObject'])(
    'refuses to synthesise an action it has no scope for (%s)',
    (action) => {
      expect(() => statementsJson({ adapter: [action] })).toThrow(
        `no resource scope for the declared action "${action}"`
      );
    }
  );

  it('gives a reason for every wildcard resource', () => {
    // Act
    const reasons = wildcardReasons(DECLARED_ACTIONS, SCOPE);
    const wildcards = statementsJson(DECLARED_ACTIONS)
      .flatMap((statement) => [statement.Resource].flat())
      .filter((resource) => resource.includes('*'));

    // Assess
    expect(reasons.map(({ resource }) => resource).sort()).toEqual([...new Set(wildcards)].sort());
    for (const { reason } of reasons) expect(reason.length).toBeGreaterThan(30);
  });
});
