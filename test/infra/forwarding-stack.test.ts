import { App, Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { IamEventForwarder } from '../../infra/constructs/iam-event-forwarder.js';
import { IAM_CHANGE_PATTERN } from '../../infra/event-patterns.js';
import { buildApp, CDK_JSON_CONTEXT, logicalIdOf, resourcesOf } from './support.js';

describe('IAM event forwarding stack', () => {
  const built = buildApp({ ...CDK_JSON_CONTEXT, homeRegion: 'eu-central-1' });
  const template = built.forwarderTemplate;

  it('is deployed to us-east-1, where IAM delivers its events', () => {
    expect(built.forwarder?.region).toBe('us-east-1');
    expect(built.scanner.region).toBe('eu-central-1');
  });

  it('forwards the same IAM pattern the home region listens for to the home default bus', () => {
    // Prepare
    const roleId = logicalIdOf(template as never, 'AWS::IAM::Role', 'ForwardingRole');
    const dlqId = logicalIdOf(template as never, 'AWS::SQS::Queue', 'ForwardingDeadLetters');
    const homeBus = {
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          ':events:eu-central-1:',
          { Ref: 'AWS::AccountId' },
          ':event-bus/default',
        ],
      ],
    };

    // Assess
    template?.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.iam'],
        'detail-type': ['AWS API Call via CloudTrail'],
        detail: {
          eventSource: ['iam.amazonaws.com'],
          eventName: IAM_CHANGE_PATTERN.detail?.eventName,
          errorCode: [{ exists: false }],
        },
      },
      Targets: [
        {
          Arn: homeBus,
          Id: 'Target0',
          RoleArn: { 'Fn::GetAtt': [roleId, 'Arn'] },
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [dlqId, 'Arn'] } },
        },
      ],
    });
    template?.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [{ Action: 'events:PutEvents', Effect: 'Allow', Resource: homeBus }],
      },
      Roles: [{ Ref: roleId }],
    });
  });

  it('lets only EventBridge assume the forwarding role, and keeps failed deliveries encrypted', () => {
    template?.hasResourceProperties('AWS::IAM::Role', {
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
    template?.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
  });

  it('says in its outputs that it relies on a CloudTrail trail it cannot see', () => {
    // Act
    const outputs = Object.values(template?.toJSON().Outputs ?? {}) as { Value: string }[];

    // Assess
    expect(outputs.map(({ Value }) => Value)).toEqual([
      expect.stringMatching(
        /^Relies on an existing CloudTrail trail it cannot see: .*management write events in us-east-1/
      ),
    ]);
  });

  it('is not created when the scanner lives in us-east-1; the output moves to the scanner stack', () => {
    // Act
    const local = buildApp({ ...CDK_JSON_CONTEXT, homeRegion: 'us-east-1' });

    // Assess
    expect(local.forwarder).toBeUndefined();
    expect(JSON.stringify(local.template.toJSON().Outputs)).toContain(
      'Relies on an existing CloudTrail trail'
    );
    expect(Object.keys(resourcesOf(local.template, 'AWS::Events::Rule'))).toHaveLength(3);
  });

  it('is not created when IAM events are turned off', () => {
    expect(buildApp({ ...CDK_JSON_CONTEXT, iamEvents: false }).forwarder).toBeUndefined();
  });

  it('refuses to be deployed outside us-east-1', () => {
    // Prepare
    const stack = new Stack(new App(), 'Elsewhere', { env: { region: 'eu-west-1' } });

    // Act & Assess
    expect(() => new IamEventForwarder(stack, 'Forwarder', { homeRegion: 'eu-west-1' })).toThrow(
      /must be deployed in us-east-1/
    );
  });
});
