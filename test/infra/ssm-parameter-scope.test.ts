// The scanning roles read AWS's public parameters and the configured prefixes only, and the
// Lambdas get the same prefixes, so a term outside them is reported without calling SSM.
import { Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { parseScannerConfig } from '../../infra/config.js';
import { propSettingValues } from '../../infra/constructs/setting-props.js';
import { handlerResources } from '../../infra/handler-roles.js';
import { type PermissionScope, scannerPolicyStatements } from '../../infra/permissions.js';
import { loadConfig } from '../../lambda/shared/config.js';
import { buildApp, CDK_JSON_CONTEXT } from './support.js';

const BASE = { homeRegion: 'eu-west-1', clusters: ['prod'] };
const PUBLIC = {
  'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':ssm:*::parameter/aws/service/*']],
};
const under = (prefix: string) => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':ssm:*:',
      { Ref: 'AWS::AccountId' },
      `:parameter${prefix}*`,
    ],
  ],
});

interface Statement {
  readonly Action: string | string[];
  readonly Resource: unknown;
}

/** Per handler, the Resource of the statement granting ssm:GetParameter (undefined: none). */
function ssmResources(template: Template): Record<string, unknown> {
  const policies = Object.values(template.findResources('AWS::IAM::Policy')) as {
    Properties: { Roles: unknown; PolicyDocument: { Statement: Statement[] } };
  }[];
  return Object.fromEntries(
    Object.entries(handlerResources(template.toJSON() as never)).map(
      ([handler, { roleLogicalId }]) => {
        const statements = policies
          .filter((policy) =>
            JSON.stringify(policy.Properties.Roles).includes(`"${roleLogicalId}"`)
          )
          .flatMap((policy) => policy.Properties.PolicyDocument.Statement)
          .filter((statement) => [statement.Action].flat().includes('ssm:GetParameter'));
        expect(statements.length, handler).toBeLessThanOrEqual(1);
        return [handler, statements[0]?.Resource];
      }
    )
  );
}

/** The SSM_PARAMETER_PREFIXES variable of each function (undefined: not set). */
function prefixVariables(template: Template): Record<string, string | undefined> {
  const functions = template.findResources('AWS::Lambda::Function') as Record<
    string,
    { Properties: { Environment: { Variables: Record<string, string> } } }
  >;
  return Object.fromEntries(
    Object.entries(handlerResources(template.toJSON() as never)).map(
      ([handler, { functionLogicalId }]) => [
        handler,
        functions[functionLogicalId]?.Properties.Environment.Variables.SSM_PARAMETER_PREFIXES,
      ]
    )
  );
}

describe('SSM parameters the scanner may read', () => {
  it('ships no custom prefix: the scanning roles read /aws/service/ parameters only', () => {
    // Act
    const { template } = buildApp();

    // Assess
    expect(CDK_JSON_CONTEXT.ssmParameterPrefixes ?? []).toEqual([]);
    expect(ssmResources(template)).toEqual({
      dispatch: undefined,
      'scan-cluster': PUBLIC,
      'ami-event': PUBLIC,
      'iam-event': PUBLIC,
    });
    expect(prefixVariables(template)).toEqual({
      dispatch: undefined,
      'scan-cluster': '',
      'ami-event': '',
      'iam-event': '',
    });
  });

  it('adds each configured prefix to the grant, in this account, and tells the Lambdas', () => {
    // Act
    const { template } = buildApp({
      ...CDK_JSON_CONTEXT,
      ssmParameterPrefixes: ['/platform/ami/', '/golden/'],
    });

    // Assess
    const scoped = [PUBLIC, under('/platform/ami/'), under('/golden/')];
    expect(ssmResources(template)).toEqual({
      dispatch: undefined,
      'scan-cluster': scoped,
      'ami-event': scoped,
      'iam-event': scoped,
    });
    const variable = prefixVariables(template)['scan-cluster'];
    expect(variable).toBe('/platform/ami/,/golden/');
    const config = loadConfig(
      {
        SSM_PARAMETER_PREFIXES: variable,
        STATE_TABLE_NAME: 'state',
        FINDINGS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:111122223333:findings',
        AWS_REGION: 'eu-west-1',
      },
      'scan-cluster'
    );
    expect(config.ssmParameterPrefixes).toEqual(['/platform/ami/', '/golden/']);
  });

  it('scopes the grant as the policy generator is told, with no account-wide parameter/*', () => {
    // Prepare
    const scope: PermissionScope = {
      partition: 'aws-cn',
      account: '111122223333',
      topicArn: 'arn:aws-cn:sns:cn-north-1:111122223333:t',
      tableArn: 'arn:aws-cn:dynamodb:cn-north-1:111122223333:table/t',
      queueArn: 'arn:aws-cn:sqs:cn-north-1:111122223333:q',
      ssmParameterPrefixes: ['/platform/ami/'],
    };

    // Act
    const [statement] = scannerPolicyStatements({ ssm: ['ssm:GetParameter'] }, scope).map(
      (item) => new Stack().resolve(item.toStatementJson()) as Statement
    );

    // Assess
    expect(statement?.Resource).toEqual([
      'arn:aws-cn:ssm:*::parameter/aws/service/*',
      'arn:aws-cn:ssm:*:111122223333:parameter/platform/ami/*',
    ]);
  });

  it('takes a list or -c a,b, and fails synth naming the key for a prefix that would widen the grant', () => {
    expect(
      parseScannerConfig({ ...BASE, ssmParameterPrefixes: '/a/,/b/' }).ssmParameterPrefixes
    ).toEqual(['/a/', '/b/']);
    for (const [prefix, problem] of [
      ['/platform/*', 'may contain only letters'],
      ['platform/', 'must start with /'],
      ['/', 'must name a path'],
      ['/aws/', 'reserved by AWS'],
    ] as const) {
      expect(() => parseScannerConfig({ ...BASE, ssmParameterPrefixes: [prefix] })).toThrow(
        new RegExp(`context key "ssmParameterPrefixes\\.0": .*${problem}`)
      );
      expect(() =>
        propSettingValues({ clusters: ['prod'], ssmParameterPrefixes: [prefix] }, undefined)
      ).toThrow(new RegExp(`ssmParameterPrefixes\\[0\\]: .*${problem}`));
    }
    const many = Array.from({ length: 40 }, (_, index) => `/team-${index}/images/`);
    expect(() => parseScannerConfig({ ...BASE, ssmParameterPrefixes: many })).toThrow(
      /context key "ssmParameterPrefixes": takes \d+ characters/
    );
    expect(() =>
      propSettingValues({ clusters: ['prod'], ssmParameterPrefixes: many }, undefined)
    ).toThrow(/ssmParameterPrefixes: takes \d+ characters .*keep it under 512/);
  });

  it('refuses a Lambda environment with a prefix the role could not match', () => {
    const env = {
      STATE_TABLE_NAME: 'state',
      FINDINGS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:111122223333:findings',
      AWS_REGION: 'eu-west-1',
    };
    expect(loadConfig(env, 'ami-event').ssmParameterPrefixes).toEqual([]);
    expect(() => loadConfig({ ...env, SSM_PARAMETER_PREFIXES: '/ok/,*' }, 'ami-event')).toThrow(
      /SSM_PARAMETER_PREFIXES\[1\]: "\*" must start with \//
    );
  });
});
