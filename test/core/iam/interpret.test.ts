import { describe, expect, it } from 'vitest';
import type {
  PermissionFacts,
  SimulationRequest,
  SimulationResult,
} from '../../../lambda/core/facts/permissions.js';
import { ok, unavailable } from '../../../lambda/core/facts/slice.js';
import {
  describeDenial,
  describeInconclusive,
  interpretGroup,
} from '../../../lambda/core/iam/interpret.js';
import { aControllerRole, NODE_ROLE } from '../../support/permission-builders.js';

const REQUEST: SimulationRequest = {
  key: 'k',
  kind: 'pass-node-role',
  group: 'pass-node-role',
  principalArn: 'arn:aws:iam::111122223333:role/c',
  actions: ['iam:PassRole'],
  resourceArns: [NODE_ROLE],
  context: [],
};

function result(overrides: Partial<SimulationResult>): SimulationResult {
  return {
    action: 'iam:PassRole',
    resource: NODE_ROLE,
    decision: 'allowed',
    matchedStatements: [],
    missingContextValues: [],
    ...overrides,
  };
}

function facts(results: PermissionFacts['simulations'][number]['results']): PermissionFacts {
  return {
    controllerRole: aControllerRole(),
    simulations: [{ request: REQUEST, results }],
    gaps: [],
  };
}

describe('interpretGroup', () => {
  it('passes when every pair is allowed with full context', () => {
    expect(interpretGroup(facts(ok([result({})])), 'pass-node-role')).toMatchObject({
      status: 'pass',
      evaluated: 1,
    });
  });

  it.each([
    [{ decision: 'implicitDeny' as const }, 'no-allow'],
    [{ decision: 'explicitDeny' as const, allowedByOrganizations: false }, 'scp'],
    [
      { decision: 'implicitDeny' as const, allowedByPermissionsBoundary: false },
      'permissions-boundary',
    ],
    [
      {
        decision: 'explicitDeny' as const,
        matchedStatements: [{ sourcePolicyId: 'DenyPassRole' }],
      },
      'identity-policy',
    ],
  ])('fails for %o, denied by %s', (overrides, deniedBy) => {
    const verdict = interpretGroup(facts(ok([result(overrides)])), 'pass-node-role');

    expect(verdict.status).toBe('fail');
    expect(verdict.denials[0]?.deniedBy).toBe(deniedBy);
  });

  it('leaves an allowed pair open for a key AWS sets when the policies could not be read', () => {
    const verdict = interpretGroup(
      facts(ok([result({ missingContextValues: ['aws:PrincipalTag/kubernetes-pod-name'] })])),
      'pass-node-role'
    );

    expect(verdict.status).toBe('error');
    expect(verdict.inconclusive[0]?.missingContextValues).toEqual([
      'aws:PrincipalTag/kubernetes-pod-name',
    ]);
  });

  it('reports an unavailable simulation and a gap as errors', () => {
    expect(
      interpretGroup(facts(unavailable('throttled', 'Rate exceeded')), 'pass-node-role')
    ).toMatchObject({
      status: 'error',
      unsimulated: [{ kind: 'pass-node-role', reason: 'throttled' }],
    });
    const withGap: PermissionFacts = {
      ...facts(ok([result({})])),
      gaps: [{ group: 'pass-node-role', reason: 'not-found', message: 'no role' }],
    };
    expect(interpretGroup(withGap, 'pass-node-role').status).toBe('error');
  });

  it('ignores other groups and errors when nothing was evaluated', () => {
    expect(
      interpretGroup(facts(ok([result({ decision: 'implicitDeny' })])), 'discover').status
    ).toBe('error');
  });

  it('names the denying statement, not the keys the policies use elsewhere', () => {
    const [denial] = interpretGroup(
      facts(
        ok([
          result({
            decision: 'explicitDeny',
            matchedStatements: [{ sourcePolicyId: 'DenyAll' }],
            missingContextValues: ['ec2:MetadataHttpTokens'],
          }),
        ])
      ),
      'pass-node-role'
    ).denials;

    expect(denial && describeDenial(denial)).toBe(
      `iam:PassRole on ${NODE_ROLE}: explicitly denied by an identity policy (matched: DenyAll)`
    );
  });

  describe('with the policies read (IAM lists missing keys policy-wide)', () => {
    const EC2 = 'arn:aws:ec2:us-east-1:111122223333';
    const policy = (name: string, ...statements: object[]) => ({
      name,
      document: JSON.stringify({ Version: '2012-10-17', Statement: statements }),
    });
    const withPolicies = (
      request: Partial<SimulationRequest>,
      outcome: SimulationResult,
      identity: { name: string; document: string }[],
      boundary?: { name: string; document: string }
    ): PermissionFacts => ({
      controllerRole: aControllerRole(),
      controllerPolicies: boundary === undefined ? { identity } : { identity, boundary },
      simulations: [
        {
          request: { ...REQUEST, kind: 'run-instances', group: 'launch', ...request },
          results: ok([outcome]),
        },
      ],
      gaps: [],
    });
    // Karpenter's reference policy: the Allow comes from the creation statement; the tagging
    // statement for existing instances uses aws:ResourceTag keys the creation request cannot have.
    const reference = policy(
      'KarpenterControllerPolicy',
      {
        Sid: 'AllowScopedResourceCreationTagging',
        Effect: 'Allow',
        Action: 'ec2:CreateTags',
        Resource: `${EC2}:instance/*`,
        Condition: { StringEquals: { 'ec2:CreateAction': ['RunInstances'] } },
      },
      {
        Sid: 'AllowScopedResourceTagging',
        Effect: 'Allow',
        Action: 'ec2:CreateTags',
        Resource: `${EC2}:instance/*`,
        Condition: {
          StringEquals: { 'aws:ResourceTag/kubernetes.io/cluster/demo': 'owned' },
          StringLike: { 'aws:ResourceTag/karpenter.sh/nodepool': '*' },
        },
      }
    );

    it("passes an allowed creation whose missing keys belong to another statement (Karpenter's reference policy)", () => {
      const verdict = interpretGroup(
        withPolicies(
          { resourceTagsKnown: true },
          result({
            action: 'ec2:CreateTags',
            resource: `${EC2}:instance/*`,
            missingContextValues: [
              'aws:ResourceTag/kubernetes.io/cluster/demo',
              'aws:ResourceTag/karpenter.sh/nodepool',
              'iam:PassedToService',
            ],
          }),
          [reference]
        ),
        'launch'
      );

      expect(verdict.status).toBe('pass');
    });

    it('passes when the only statement using the missing key is an Allow (it cannot deny an allowed pair)', () => {
      const verdict = interpretGroup(
        withPolicies(
          {},
          result({
            action: 'ec2:RunInstances',
            resource: `${EC2}:subnet/subnet-1`,
            missingContextValues: ['aws:SourceVpc'],
          }),
          [
            policy('P', {
              Sid: 'AllowFromVpc',
              Effect: 'Allow',
              Action: 'ec2:*',
              Resource: '*',
              Condition: { StringEquals: { 'aws:SourceVpc': 'vpc-1' } },
            }),
          ]
        ),
        'launch'
      );

      expect(verdict.status).toBe('pass');
    });

    it('leaves an allowed pair open when a Deny that applies uses a key AWS sets, naming key and Sid', () => {
      const verdict = interpretGroup(
        withPolicies(
          {},
          result({
            action: 'ec2:RunInstances',
            resource: `${EC2}:subnet/subnet-1`,
            missingContextValues: ['ec2:ResourceTag/env'],
          }),
          [
            policy('Guardrails', {
              Sid: 'DenyProdSubnets',
              Effect: 'Deny',
              Action: 'ec2:RunInstances',
              Resource: `${EC2}:subnet/*`,
              Condition: { StringEquals: { 'ec2:ResourceTag/env': 'prod' } },
            }),
          ]
        ),
        'launch'
      );

      expect(verdict.status).toBe('error');
      const [item] = verdict.inconclusive;
      expect(item?.openKeys).toEqual([
        {
          key: 'ec2:ResourceTag/env',
          statements: [{ policy: 'Guardrails', sid: 'DenyProdSubnets', place: 'identity' }],
        },
      ]);
      expect(item && describeInconclusive(item)).toBe(
        `ec2:RunInstances on ${EC2}:subnet/subnet-1 is allowed in simulation, but the decision depends on ec2:ResourceTag/env (used by DenyProdSubnets in Guardrails), which AWS sets when Karpenter calls and the scanner cannot know`
      );
    });

    it('ignores a Deny for other actions or resources, and keys absent at launch', () => {
      const deny = (Action: string, Resource: string, key: string) => ({
        Sid: `Deny-${key}`,
        Effect: 'Deny',
        Action,
        Resource,
        Condition: { StringEquals: { [key]: 'x' } },
      });
      const verdict = interpretGroup(
        withPolicies(
          { resourceTagsKnown: true },
          result({
            action: 'ec2:RunInstances',
            resource: `${EC2}:instance/*`,
            missingContextValues: [
              'aws:SourceIp',
              'aws:CurrentTime',
              'aws:ResourceTag/team',
              'aws:RequestTag/cost-center',
            ],
          }),
          [
            policy(
              'P',
              deny('ec2:TerminateInstances', '*', 'aws:SourceIp'),
              deny('ec2:RunInstances', `${EC2}:volume/*`, 'aws:CurrentTime'),
              // Karpenter sends no such tag, and an instance being created has no tags yet.
              deny('ec2:RunInstances', '*', 'aws:ResourceTag/team'),
              deny('ec2:RunInstances', '*', 'aws:RequestTag/cost-center')
            ),
          ]
        ),
        'launch'
      );

      expect(verdict.status).toBe('pass');
    });

    it('applies NotAction and NotResource as IAM does', () => {
      const outcome = result({
        action: 'ec2:RunInstances',
        resource: `${EC2}:subnet/subnet-1`,
        missingContextValues: ['aws:SourceIp'],
      });
      const deny = (extra: object) => ({
        Sid: 'DenyOutsideOffice',
        Effect: 'Deny',
        Condition: { NotIpAddress: { 'aws:SourceIp': '10.0.0.0/8' } },
        ...extra,
      });
      const statusWith = (extra: object) =>
        interpretGroup(withPolicies({}, outcome, [policy('P', deny(extra))]), 'launch').status;

      expect(statusWith({ NotAction: 'ec2:Describe*', Resource: '*' })).toBe('error');
      expect(statusWith({ NotAction: 'ec2:*', Resource: '*' })).toBe('pass');
      expect(statusWith({ Action: '*', NotResource: `${EC2}:subnet/*` })).toBe('pass');
      expect(statusWith({ Action: '*', NotResource: `${EC2}:volume/*` })).toBe('error');
    });

    it('leaves an implicit deny open when an Allow that applies (identity or boundary) uses a key AWS sets', () => {
      const outcome = result({
        action: 'ec2:RunInstances',
        resource: `${EC2}:subnet/subnet-1`,
        decision: 'implicitDeny',
        missingContextValues: ['aws:ResourceTag/karpenter.sh/discovery'],
      });
      const allow = policy('P', {
        Sid: 'AllowDiscoveredSubnets',
        Effect: 'Allow',
        Action: 'ec2:RunInstances',
        Resource: `${EC2}:subnet/*`,
        Condition: { StringEquals: { 'aws:ResourceTag/karpenter.sh/discovery': 'demo' } },
      });
      const open = interpretGroup(withPolicies({}, outcome, [allow]), 'launch');
      expect(open.status).toBe('error');
      expect(open.inconclusive[0]?.decision).toBe('implicitDeny');

      const inBoundary = interpretGroup(
        withPolicies(
          {},
          outcome,
          [policy('Q', { Effect: 'Allow', Action: '*', Resource: '*' })],
          allow
        ),
        'launch'
      );
      expect(inBoundary.inconclusive[0]?.openKeys[0]?.statements).toEqual([
        { policy: 'P', sid: 'AllowDiscoveredSubnets', place: 'boundary' },
      ]);

      // The subnet's tags were read: a tag missing from the context is a tag it does not have.
      const known = interpretGroup(
        withPolicies({ resourceTagsKnown: true }, outcome, [allow]),
        'launch'
      );
      expect(known.status).toBe('fail');
      expect(known.denials[0]?.deniedBy).toBe('no-allow');
    });

    it('leaves an allowed pair open when the Allow matched only because the key was missing', () => {
      const allowedWithout = (operator: string) =>
        interpretGroup(
          withPolicies(
            {},
            result({
              action: 'ec2:RunInstances',
              resource: `${EC2}:subnet/subnet-1`,
              missingContextValues: ['aws:SourceVpc'],
            }),
            [
              policy('P', {
                Sid: 'AllowFromVpc',
                Effect: 'Allow',
                Action: 'ec2:*',
                Resource: '*',
                Condition: { [operator]: { 'aws:SourceVpc': 'vpc-1' } },
              }),
            ]
          ),
          'launch'
        ).status;

      // At launch AWS sets aws:SourceVpc: these conditions may then stop holding.
      expect(allowedWithout('StringEqualsIfExists')).toBe('error');
      expect(allowedWithout('StringNotEquals')).toBe('error');
      // A plain StringEquals could not have held without the key: not this Allow's doing.
      expect(allowedWithout('StringEquals')).toBe('pass');
    });

    it('takes a NotResource pattern holding a policy variable as excluding nothing', () => {
      const verdict = interpretGroup(
        withPolicies(
          {},
          result({
            action: 'ec2:RunInstances',
            resource: `${EC2}:subnet/subnet-1`,
            missingContextValues: ['aws:SourceVpc'],
          }),
          [
            policy('P', {
              Sid: 'DenyOtherSubnets',
              Effect: 'Deny',
              Action: 'ec2:RunInstances',
              NotResource: `${EC2}:subnet/\${aws:PrincipalTag/subnet}`,
              Condition: { StringNotEquals: { 'aws:SourceVpc': 'vpc-1' } },
            }),
          ]
        ),
        'launch'
      );

      expect(verdict.status).toBe('error');
    });

    it('takes a resource key its resource type does not have as absent (no zone on a security group)', () => {
      const deny = policy('P', {
        Sid: 'DenyZone',
        Effect: 'Deny',
        Action: 'ec2:RunInstances',
        Resource: '*',
        Condition: { StringEquals: { 'ec2:AvailabilityZone': 'us-east-1a' } },
      });
      const on = (resource: string) =>
        interpretGroup(
          withPolicies(
            {},
            result({
              action: 'ec2:RunInstances',
              resource,
              missingContextValues: ['ec2:AvailabilityZone'],
            }),
            [deny]
          ),
          'launch'
        ).status;

      expect(on(`${EC2}:security-group/sg-1`)).toBe('pass');
      expect(on(`${EC2}:subnet/subnet-1`)).toBe('error');
    });

    it('keeps an SCP denial: IAM does not list the keys SCPs use', () => {
      const verdict = interpretGroup(
        withPolicies(
          {},
          result({
            decision: 'explicitDeny',
            allowedByOrganizations: false,
            missingContextValues: ['aws:SourceIp'],
          }),
          [
            policy('P', {
              Effect: 'Deny',
              Action: '*',
              Resource: '*',
              Condition: { IpAddress: { 'aws:SourceIp': '1.1.1.1/32' } },
            }),
          ]
        ),
        'launch'
      );

      expect(verdict.denials[0]?.deniedBy).toBe('scp');
    });

    it('treats a policy variable as a key the statement uses', () => {
      const verdict = interpretGroup(
        withPolicies(
          { kind: 'pass-node-role', group: 'pass-node-role' },
          result({
            action: 'iam:PassRole',
            resource: NODE_ROLE,
            decision: 'implicitDeny',
            missingContextValues: ['aws:PrincipalTag/team'],
          }),
          [
            policy('P', {
              Sid: 'PassOwnTeamRoles',
              Effect: 'Allow',
              Action: 'iam:PassRole',
              // biome-ignore lint/suspicious/noTemplateCurlyInString: an IAM policy variable, not a template
              Resource: 'arn:aws:iam::111122223333:role/${aws:PrincipalTag/team}-*',
            }),
          ]
        ),
        'pass-node-role'
      );

      expect(verdict.inconclusive[0]?.openKeys[0]?.key).toBe('aws:PrincipalTag/team');
    });
  });
});
