import type { ContextEntry, SimulatePrincipalPolicyCommandInput } from '@aws-sdk/client-iam';
import { describe, expect, it } from 'vitest';
import {
  type PrincipalPolicyDocuments,
  simulatePrincipalPolicy,
} from '../../../lambda/adapters/iam-engine/simulate-principal-policy.js';

const ACCOUNT = '111122223333';
const CONTROLLER = `arn:aws:iam::${ACCOUNT}:role/KarpenterController`;
const ec2 = (resource: string) => `arn:aws:ec2:us-east-1:${ACCOUNT}:${resource}`;

type PolicyStatement = Record<string, unknown>;

const documentOf = (...statements: PolicyStatement[]) =>
  JSON.stringify({ Version: '2012-10-17', Statement: statements });

const inline = (name: string, ...statements: PolicyStatement[]) => ({
  name,
  type: 'inline' as const,
  document: documentOf(...statements),
});

const allow = (action: string | string[], resource: string | string[] = '*', more = {}) => ({
  Effect: 'Allow',
  Action: action,
  Resource: resource,
  ...more,
});

const deny = (action: string | string[], resource: string | string[] = '*', more = {}) => ({
  Effect: 'Deny',
  Action: action,
  Resource: resource,
  ...more,
});

const entry = (key: string, ...values: string[]): ContextEntry => ({
  ContextKeyName: key,
  ContextKeyValues: values,
  ContextKeyType: 'string',
});

async function simulate(
  policies: PrincipalPolicyDocuments,
  request: Omit<SimulatePrincipalPolicyCommandInput, 'PolicySourceArn'>
) {
  const output = await simulatePrincipalPolicy(policies, {
    PolicySourceArn: CONTROLLER,
    ...request,
  });
  return output.EvaluationResults ?? [];
}

async function one(
  policies: PrincipalPolicyDocuments,
  request: Omit<SimulatePrincipalPolicyCommandInput, 'PolicySourceArn'>
) {
  const [result] = await simulate(policies, request);
  if (result === undefined) throw new Error('no result');
  return result;
}

describe('simulatePrincipalPolicy: MissingContextValues', () => {
  const DESCRIBE = { ActionNames: ['ec2:DescribeImages'] };
  const describeOnly = allow('ec2:DescribeImages');
  const taggedLaunch = allow('ec2:RunInstances', '*', {
    Condition: { StringEquals: { 'aws:RequestTag/Team': 'blue' } },
  });

  it('lists keys of statements for other actions: IAM reports them policy-wide', async () => {
    // Act
    const result = await one(
      { identity: [inline('controller', describeOnly, taggedLaunch)] },
      DESCRIBE
    );

    // Assess
    expect(result.EvalDecision).toBe('allowed');
    expect(result.MissingContextValues).toEqual(['aws:RequestTag/Team']);
  });

  it('lists nothing once the statement holding the key is removed', async () => {
    // Act
    const result = await one({ identity: [inline('controller', describeOnly)] }, DESCRIBE);

    // Assess
    expect(result.MissingContextValues).toEqual([]);
  });

  it('does not list a key the request supplies, whatever its case', async () => {
    // Act
    const result = await one(
      { identity: [inline('controller', describeOnly, taggedLaunch)] },
      { ...DESCRIBE, ContextEntries: [entry('aws:requesttag/team', 'blue')] }
    );

    // Assess
    expect(result.MissingContextValues).toEqual([]);
  });

  it('lists each key once, as first written, from identity policies and the boundary', async () => {
    // Prepare
    const regional = allow('ec2:DescribeImages', '*', {
      Condition: { StringEquals: { 'aws:RequestedRegion': 'us-east-1' } },
    });
    const policies = {
      identity: [
        inline('one', describeOnly, taggedLaunch),
        inline(
          'two',
          allow('ec2:CreateTags', '*', {
            Condition: { StringLike: { 'AWS:REQUESTTAG/TEAM': '*' } },
          })
        ),
      ],
      boundary: { arn: `arn:aws:iam::${ACCOUNT}:policy/Boundary`, document: documentOf(regional) },
    };

    // Act
    const result = await one(policies, DESCRIBE);

    // Assess
    expect(result.MissingContextValues).toEqual(['aws:RequestTag/Team', 'aws:RequestedRegion']);
  });

  it('does not list keys only SCPs use, though they decide', async () => {
    // Prepare
    const scp = documentOf(
      allow('*'),
      deny('ec2:*', '*', { Condition: { StringNotEquals: { 'aws:RequestedRegion': 'us-east-1' } } })
    );

    // Act
    const result = await one(
      { identity: [inline('controller', describeOnly)], scps: [{ id: 'p-region', document: scp }] },
      DESCRIBE
    );

    // Assess: the absent region is not us-east-1, so the SCP denies without naming the key.
    expect(result.MissingContextValues).toEqual([]);
    expect(result.EvalDecision).toBe('explicitDeny');
    expect(result.OrganizationsDecisionDetail?.AllowedByOrganizations).toBe(false);
  });
});

describe('simulatePrincipalPolicy: decisions and what decided them', () => {
  it('names the identity policy whose Deny statement denies, not the one that allows', async () => {
    // Prepare
    const policies: PrincipalPolicyDocuments = {
      identity: [
        inline('AllowLaunch', allow('ec2:RunInstances')),
        {
          name: 'NoBadSubnet',
          arn: `arn:aws:iam::${ACCOUNT}:policy/NoBadSubnet`,
          type: 'managed',
          document: documentOf(deny('ec2:RunInstances', 'arn:aws:ec2:*:*:subnet/subnet-bad')),
        },
      ],
    };

    // Act
    const result = await one(policies, {
      ActionNames: ['ec2:RunInstances'],
      ResourceArns: [ec2('subnet/subnet-bad')],
    });

    // Assess
    const [resource] = result.ResourceSpecificResults ?? [];
    expect(resource?.EvalResourceDecision).toBe('explicitDeny');
    expect(resource?.MatchedStatements).toEqual([
      { SourcePolicyId: 'NoBadSubnet', SourcePolicyType: 'user-managed' },
    ]);
  });

  it('names every identity policy with an Allow that applies, and none on an implicit deny', async () => {
    // Prepare
    const policies: PrincipalPolicyDocuments = {
      identity: [
        inline('Launch', allow('ec2:RunInstances')),
        inline('Describe', allow('ec2:Describe*')),
        {
          name: 'AmazonEC2FullAccess',
          arn: 'arn:aws:iam::aws:policy/AmazonEC2FullAccess',
          type: 'managed',
          document: documentOf(allow('ec2:*')),
        },
      ],
    };

    // Act
    const [launch, passRole] = await simulate(policies, {
      ActionNames: ['ec2:RunInstances', 'iam:PassRole'],
    });

    // Assess
    expect(launch?.EvalDecision).toBe('allowed');
    expect(launch?.MatchedStatements).toEqual([
      { SourcePolicyId: 'Launch', SourcePolicyType: 'role' },
      { SourcePolicyId: 'AmazonEC2FullAccess', SourcePolicyType: 'aws-managed' },
    ]);
    expect(passRole?.EvalDecision).toBe('implicitDeny');
    expect(passRole?.MatchedStatements).toEqual([]);
  });

  it('sets AllowedByPermissionsBoundary=false when the boundary does not allow', async () => {
    // Prepare
    const policies: PrincipalPolicyDocuments = {
      identity: [inline('Everything', allow('*'))],
      boundary: {
        arn: `arn:aws:iam::${ACCOUNT}:policy/ReadOnlyBoundary`,
        document: documentOf(allow('ec2:Describe*')),
      },
    };

    // Act
    const [launch, describe] = await simulate(policies, {
      ActionNames: ['ec2:RunInstances', 'ec2:DescribeImages'],
      ResourceArns: [ec2('instance/*')],
    });

    // Assess
    expect(launch?.EvalDecision).toBe('implicitDeny');
    expect(launch?.PermissionsBoundaryDecisionDetail?.AllowedByPermissionsBoundary).toBe(false);
    expect(
      launch?.ResourceSpecificResults?.[0]?.PermissionsBoundaryDecisionDetail
        ?.AllowedByPermissionsBoundary
    ).toBe(false);
    expect(describe?.EvalDecision).toBe('allowed');
    expect(describe?.PermissionsBoundaryDecisionDetail?.AllowedByPermissionsBoundary).toBe(true);
  });

  it('names the boundary when its own Deny statement denies', async () => {
    // Prepare
    const policies: PrincipalPolicyDocuments = {
      identity: [inline('Everything', allow('*'))],
      boundary: {
        arn: `arn:aws:iam::${ACCOUNT}:policy/path/NoPassRole`,
        document: documentOf(allow('*'), deny('iam:PassRole')),
      },
    };

    // Act
    const result = await one(policies, { ActionNames: ['iam:PassRole'] });

    // Assess
    expect(result.EvalDecision).toBe('explicitDeny');
    expect(result.PermissionsBoundaryDecisionDetail?.AllowedByPermissionsBoundary).toBe(false);
    expect(result.MatchedStatements).toEqual([
      { SourcePolicyId: 'NoPassRole', SourcePolicyType: 'user-managed' },
    ]);
  });

  it('sets AllowedByOrganizations=false when an SCP denies, true when they allow', async () => {
    // Prepare
    const policies: PrincipalPolicyDocuments = {
      identity: [inline('Everything', allow('*'))],
      scps: [
        { id: 'p-FullAWSAccess', document: documentOf(allow('*')) },
        { id: 'p-NoGpu', document: documentOf(deny('ec2:RunInstances', ec2('instance/gpu-*'))) },
      ],
    };

    // Act
    const [result] = await simulate(policies, {
      ActionNames: ['ec2:RunInstances'],
      ResourceArns: [ec2('instance/gpu-1')],
    });
    const [other] = await simulate(policies, {
      ActionNames: ['ec2:RunInstances'],
      ResourceArns: [ec2('instance/cpu-1')],
    });

    // Assess
    expect(result?.EvalDecision).toBe('explicitDeny');
    expect(result?.OrganizationsDecisionDetail?.AllowedByOrganizations).toBe(false);
    expect(other?.EvalDecision).toBe('allowed');
    expect(other?.OrganizationsDecisionDetail?.AllowedByOrganizations).toBe(true);
  });

  it('reports no boundary or organizations detail when there is no boundary and no SCP', async () => {
    // Act
    const result = await one(
      { identity: [inline('Everything', allow('*'))] },
      { ActionNames: ['ec2:RunInstances'] }
    );

    // Assess
    expect(result).not.toHaveProperty('PermissionsBoundaryDecisionDetail');
    expect(result).not.toHaveProperty('OrganizationsDecisionDetail');
  });

  it('evaluates NotAction and NotResource', async () => {
    // Prepare
    const policies: PrincipalPolicyDocuments = {
      identity: [
        inline(
          'AllButIam',
          { Effect: 'Allow', NotAction: 'iam:*', Resource: '*' },
          {
            Effect: 'Deny',
            Action: 'ec2:RunInstances',
            NotResource: 'arn:aws:ec2:*:*:subnet/subnet-ok',
          }
        ),
      ],
    };

    // Act
    const [launch, passRole] = await simulate(policies, {
      ActionNames: ['ec2:RunInstances', 'iam:PassRole'],
      ResourceArns: [ec2('subnet/subnet-ok'), ec2('subnet/subnet-other')],
    });

    // Assess
    expect(launch?.ResourceSpecificResults?.map((result) => result.EvalResourceDecision)).toEqual([
      'allowed',
      'explicitDeny',
    ]);
    expect(passRole?.EvalDecision).toBe('implicitDeny');
  });
});

describe('simulatePrincipalPolicy: conditions', () => {
  const tagged = (operator: string) => ({
    identity: [
      inline(
        'Tagged',
        allow('ec2:RunInstances', '*', {
          Condition: { [operator]: { 'aws:RequestTag/karpenter.sh/nodepool': '*' } },
        })
      ),
    ],
  });
  const launchWithNodePool = {
    ActionNames: ['ec2:RunInstances'],
    ContextEntries: [entry('aws:RequestTag/karpenter.sh/nodepool', 'default')],
  };

  it('matches `*` as a wildcard with StringLike and as a literal with StringEquals', async () => {
    // Act
    const like = await one(tagged('StringLike'), launchWithNodePool);
    const equals = await one(tagged('StringEquals'), launchWithNodePool);

    // Assess
    expect(like.EvalDecision).toBe('allowed');
    expect(equals.EvalDecision).toBe('implicitDeny');
  });

  it('matches ForAnyValue:StringLike on the aws:TagKeys list, whichever type the entry says', async () => {
    // Prepare
    const policies = {
      identity: [
        inline(
          'TagKarpenter',
          allow('ec2:CreateTags', '*', {
            Condition: { 'ForAnyValue:StringLike': { 'aws:TagKeys': 'karpenter.sh/*' } },
          })
        ),
      ],
    };
    const tagKeys = (type: 'stringList' | 'string', ...keys: string[]) => ({
      ActionNames: ['ec2:CreateTags'],
      ResourceArns: [ec2('instance/*')],
      ContextEntries: [
        { ContextKeyName: 'aws:TagKeys', ContextKeyValues: keys, ContextKeyType: type },
      ],
    });

    // Act
    const some = await one(policies, tagKeys('stringList', 'Name', 'karpenter.sh/nodepool'));
    const none = await one(policies, tagKeys('stringList', 'Name', 'team'));
    const typedAsString = await one(policies, tagKeys('string', 'karpenter.sh/nodepool'));

    // Assess
    expect(some.EvalDecision).toBe('allowed');
    expect(none.EvalDecision).toBe('implicitDeny');
    expect(typedAsString.EvalDecision).toBe('allowed');
  });

  it('resolves policy variables such as aws:PrincipalTag in a condition value', async () => {
    // Prepare
    // biome-ignore lint/suspicious/noTemplateCurlyInString: an IAM policy variable.
    const principalTeam = '${aws:PrincipalTag/team}';
    const policies = {
      identity: [
        inline(
          'OwnTeam',
          allow('ec2:RunInstances', '*', {
            Condition: { StringEquals: { 'aws:RequestTag/team': principalTeam } },
          })
        ),
      ],
    };
    const request = (principalTeam: string) => ({
      ActionNames: ['ec2:RunInstances'],
      ContextEntries: [
        entry('aws:RequestTag/team', 'blue'),
        entry('aws:PrincipalTag/team', principalTeam),
      ],
    });

    // Act
    const same = await one(policies, request('blue'));
    const other = await one(policies, request('red'));

    // Assess
    expect(same.EvalDecision).toBe('allowed');
    expect(other.EvalDecision).toBe('implicitDeny');
  });
});

describe('simulatePrincipalPolicy: resources', () => {
  it('answers one ResourceSpecificResult per resource, in order, under one result per action', async () => {
    // Prepare
    const policies = {
      identity: [
        inline(
          'Launch',
          allow('ec2:RunInstances', [
            'arn:aws:ec2:*:*:instance/*',
            'arn:aws:ec2:*::image/*',
            'arn:aws:ec2:*:*:subnet/*',
          ]),
          deny('ec2:RunInstances', 'arn:aws:ec2:*:*:subnet/subnet-bad')
        ),
      ],
    };
    const resources = [
      ec2('instance/*'),
      'arn:aws:ec2:us-east-1::image/ami-0123456789abcdef0',
      ec2('subnet/subnet-bad'),
      ec2('volume/*'),
    ];

    // Act
    const results = await simulate(policies, {
      ActionNames: ['ec2:RunInstances'],
      ResourceArns: resources,
    });

    // Assess
    expect(results).toHaveLength(1);
    expect(results[0]?.EvalResourceName).toBe('*');
    expect(results[0]?.EvalDecision).toBe('explicitDeny');
    expect(
      results[0]?.ResourceSpecificResults?.map((result) => [
        result.EvalResourceName,
        result.EvalResourceDecision,
      ])
    ).toEqual([
      [resources[0], 'allowed'],
      [resources[1], 'allowed'],
      [resources[2], 'explicitDeny'],
      [resources[3], 'implicitDeny'],
    ]);
  });

  it("simulates `*` with no ResourceArns, matched only by a policy's `*`, at the top level", async () => {
    // Prepare
    const scoped = { identity: [inline('Scoped', allow('ec2:RunInstances', 'arn:aws:ec2:*:*:*'))] };
    const any = { identity: [inline('Any', allow('ec2:RunInstances'))] };

    // Act
    const scopedResult = await one(scoped, { ActionNames: ['ec2:RunInstances'] });
    const anyResult = await one(any, { ActionNames: ['ec2:RunInstances'] });

    // Assess
    expect(scopedResult.EvalDecision).toBe('implicitDeny');
    expect(scopedResult).not.toHaveProperty('ResourceSpecificResults');
    expect(anyResult.EvalDecision).toBe('allowed');
    expect(anyResult.EvalResourceName).toBe('*');
  });

  it('matches a requested ARN as written: an Allow on one instance does not allow instance/*', async () => {
    // Prepare
    const policies = {
      identity: [inline('One', allow('ec2:RunInstances', 'arn:aws:ec2:*:*:instance/i-0123'))],
    };

    // Act
    const result = await one(policies, {
      ActionNames: ['ec2:RunInstances'],
      ResourceArns: [ec2('instance/*'), ec2('instance/i-0123')],
    });

    // Assess
    expect(result.ResourceSpecificResults?.map((entry) => entry.EvalResourceDecision)).toEqual([
      'implicitDeny',
      'allowed',
    ]);
  });

  it("evaluates Karpenter's requests iam-simulate's validation has no resource type for", async () => {
    // Prepare: parts of Karpenter's reference controller policy
    const policies = {
      identity: [
        inline(
          'KarpenterControllerPolicy',
          allow('ssm:GetParameter', 'arn:aws:ssm:*::parameter/aws/service/*'),
          allow(
            ['ec2:RunInstances', 'ec2:CreateFleet'],
            [
              'arn:aws:ec2:*:*:network-interface/*',
              'arn:aws:ec2:*::snapshot/*',
              'arn:aws:ec2:*:*:security-group/*',
            ]
          ),
          allow('ec2:CreateTags', 'arn:aws:ec2:*:*:fleet/*', {
            Condition: { StringEquals: { 'ec2:CreateAction': ['CreateFleet', 'RunInstances'] } },
          }),
          allow('iam:PassRole', `arn:aws:iam::${ACCOUNT}:role/KarpenterNodeRole-*`, {
            Condition: { StringEquals: { 'iam:PassedToService': 'ec2.amazonaws.com' } },
          })
        ),
      ],
    };
    const context = [
      entry('ec2:CreateAction', 'CreateFleet'),
      entry('iam:PassedToService', 'ec2.amazonaws.com'),
    ];

    // Act
    const [parameter] = await simulate(policies, {
      ActionNames: ['ssm:GetParameter'],
      ResourceArns: ['arn:aws:ssm:us-east-1::parameter/aws/service/eks/optimized-ami/1.31/x'],
      ContextEntries: context,
    });
    const [fleet, tags] = await simulate(policies, {
      ActionNames: ['ec2:CreateFleet', 'ec2:CreateTags'],
      ResourceArns: [ec2('network-interface/*'), 'arn:aws:ec2:us-east-1::snapshot/*'],
      ContextEntries: context,
    });
    const [tagFleet] = await simulate(policies, {
      ActionNames: ['ec2:CreateTags'],
      ResourceArns: [ec2('fleet/*')],
      ContextEntries: context,
    });
    const [passRole] = await simulate(policies, {
      ActionNames: ['iam:PassRole'],
      ResourceArns: [`arn:aws:iam::${ACCOUNT}:role/KarpenterNodeRole-prod`],
      ContextEntries: context,
    });

    // Assess
    expect(parameter?.EvalDecision).toBe('allowed');
    expect(fleet?.EvalDecision).toBe('allowed');
    expect(tags?.EvalDecision).toBe('implicitDeny');
    expect(tagFleet?.EvalDecision).toBe('allowed');
    expect(passRole?.EvalDecision).toBe('allowed');
  });
});

describe('simulatePrincipalPolicy: what it refuses', () => {
  it('throws for an action IAM does not have, naming iam-simulate’s error', async () => {
    // Act
    const simulation = simulate(
      { identity: [inline('Everything', allow('*'))] },
      { ActionNames: ['ec2:LaunchRocket'] }
    );

    // Assess
    await expect(simulation).rejects.toThrow(/ec2:LaunchRocket.*invalid\.action/);
  });

  it('throws for a policy iam-simulate finds invalid, naming the policy', async () => {
    // Act
    const simulation = simulate(
      { identity: [inline('Broken', { Effect: 'Allow', Action: 'ec2:RunInstances' })] },
      { ActionNames: ['ec2:RunInstances'] }
    );

    // Assess
    await expect(simulation).rejects.toThrow(/Broken/);
  });

  it('throws for a document that is not JSON, naming the policy', async () => {
    // Act
    const simulation = simulate(
      { identity: [{ name: 'Garbled', type: 'inline', document: '{"Statement": [' }] },
      { ActionNames: ['ec2:RunInstances'] }
    );

    // Assess
    await expect(simulation).rejects.toThrow(/Garbled is not JSON/);
  });
});
