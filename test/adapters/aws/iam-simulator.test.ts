import {
  GetPolicyCommand,
  GetPolicyVersionCommand,
  GetRoleCommand,
  GetRolePolicyCommand,
  IAMClient,
  IAMServiceException,
  ListAttachedRolePoliciesCommand,
  ListRolePoliciesCommand,
  SimulatePrincipalPolicyCommand,
  type SimulatePrincipalPolicyCommandInput,
} from '@aws-sdk/client-iam';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { DECLARED_ACTIONS } from '../../../lambda/adapters/aws/declared-actions.js';
import {
  createIamRolePolicyReader,
  createIamSimulator,
  iamSimulatorActions,
} from '../../../lambda/adapters/aws/iam-simulator.js';
import { createPermissionsEnricher } from '../../../lambda/app/collect-permissions.js';
import { controllerCanLaunch } from '../../../lambda/core/checks/controller-can-launch.js';
import { controllerCanPassNodeRole } from '../../../lambda/core/checks/controller-can-pass-node-role.js';
import type { SimulationRequest } from '../../../lambda/core/facts/permissions.js';
import { SourceUnavailableError } from '../../../lambda/shared/errors.js';
import {
  aPermissionsInventory,
  CONTROLLER_ROLE,
  GPU_NODE_ROLE,
  NODE_ROLE,
} from '../../support/permission-builders.js';

const iamMock = mockClient(IAMClient);
const now = new Date('2026-11-01T00:00:00Z');
const EC2 = 'arn:aws:ec2:us-east-1:111122223333';

function ctx(key: string, values: string[], type: 'string' | 'stringList' = 'string') {
  return { ContextKeyName: key, ContextKeyValues: values, ContextKeyType: type };
}

/** Karpenter's EC2 request tags for a class and NodePool, as sorted context entries. */
function requestTags(nodeClass: string, nodePool: string, extra: Record<string, string> = {}) {
  const tags: Record<string, string> = {
    'eks:eks-cluster-name': 'demo',
    'karpenter.k8s.aws/ec2nodeclass': nodeClass,
    'karpenter.sh/nodepool': nodePool,
    'kubernetes.io/cluster/demo': 'owned',
    ...extra,
  };
  return {
    request: Object.keys(tags)
      .sort()
      .map((key) => ctx(`aws:RequestTag/${key}`, [tags[key] ?? ''])),
    resource: Object.keys(tags)
      .sort()
      .map((key) => ctx(`aws:ResourceTag/${key}`, [tags[key] ?? ''])),
    keys: ctx('aws:TagKeys', Object.keys(tags).sort(), 'stringList'),
  };
}

const REGION = ctx('aws:RequestedRegion', ['us-east-1']);

function inputs(): SimulatePrincipalPolicyCommandInput[] {
  return iamMock.commandCalls(SimulatePrincipalPolicyCommand).map((call) => call.args[0].input);
}

function inputFor(
  actions: string[],
  resource: string
): SimulatePrincipalPolicyCommandInput | undefined {
  return inputs().find(
    (input) =>
      JSON.stringify(input.ActionNames) === JSON.stringify(actions) &&
      input.ResourceArns?.includes(resource)
  );
}

async function scan(only?: string) {
  const base = aPermissionsInventory();
  const inventory = only
    ? { ...base, nodeClasses: base.nodeClasses.filter((entry) => entry.name === only) }
    : base;
  const enricher = createPermissionsEnricher({
    simulator: createIamSimulator(new IAMClient({})),
    concurrency: 1,
  });
  return enricher.enrich(inventory);
}

/** Answers every action × resource with `decide`, the way IAM does now (ResourceSpecificResults). */
function answer(
  decide: (action: string, resource: string) => Record<string, unknown> = () => ({})
) {
  iamMock
    .on(SimulatePrincipalPolicyCommand)
    .callsFake((input: SimulatePrincipalPolicyCommandInput) => ({
      EvaluationResults: (input.ActionNames ?? []).map((action) => ({
        EvalActionName: action,
        EvalResourceName: '*',
        EvalDecision: 'allowed',
        ResourceSpecificResults: (input.ResourceArns ?? ['*']).map((resource) => ({
          EvalResourceName: resource,
          EvalResourceDecision: 'allowed',
          ...decide(action, resource),
        })),
        ...decide(action, '*top-level*'),
      })),
      IsTruncated: false,
    }));
}

beforeEach(() => {
  iamMock.reset();
});

describe('iam-simulator: exact SimulatePrincipalPolicy inputs', () => {
  const PROFILE =
    'arn:aws:iam::111122223333:instance-profile/karpenter/us-east-1/demo/uid-default/demo_1234567890';
  const PROFILE_TAG_VALUES: [string, string][] = [
    ['eks:eks-cluster-name', 'demo'],
    ['karpenter.k8s.aws/ec2nodeclass', 'default'],
    ['kubernetes.io/cluster/demo', 'owned'],
    ['team', 'platform'],
    ['topology.kubernetes.io/region', 'us-east-1'],
  ];
  const PROFILE_TAGS = {
    request: PROFILE_TAG_VALUES.map(([key, value]) => ctx(`aws:RequestTag/${key}`, [value])),
    resource: PROFILE_TAG_VALUES.map(([key, value]) => ctx(`aws:ResourceTag/${key}`, [value])),
    keys: ctx(
      'aws:TagKeys',
      PROFILE_TAG_VALUES.map(([key]) => key),
      'stringList'
    ),
  };

  it('sends every Karpenter request of a role-mode NodeClass with its full context', async () => {
    // Prepare
    answer();
    const tags = requestTags('default', 'general', { team: 'platform' });
    const created = [...tags.request, REGION, tags.keys];

    // Act
    await scan('default');

    // Assess
    expect(inputs()).toEqual([
      {
        // The create calls and the use of existing resources carry the same context (request
        // tags, no ec2:CreateAction): one simulation of all their pairs.
        PolicySourceArn: CONTROLLER_ROLE,
        MaxItems: 1000,
        ActionNames: ['ec2:CreateLaunchTemplate', 'ec2:CreateFleet', 'ec2:RunInstances'],
        ResourceArns: [
          `${EC2}:launch-template/*`,
          `${EC2}:fleet/*`,
          `${EC2}:instance/*`,
          `${EC2}:volume/*`,
          `${EC2}:network-interface/*`,
          'arn:aws:ec2:us-east-1::image/ami-0123456789abcdef0',
          'arn:aws:ec2:us-east-1::snapshot/*',
          `${EC2}:subnet/subnet-aaa`,
          `${EC2}:subnet/subnet-bbb`,
          `${EC2}:security-group/sg-111`,
        ],
        ContextEntries: created,
      },
      // Each tag on create, with the ec2:CreateAction AWS sets on it.
      {
        PolicySourceArn: CONTROLLER_ROLE,
        MaxItems: 1000,
        ActionNames: ['ec2:CreateTags'],
        ResourceArns: [`${EC2}:launch-template/*`],
        ContextEntries: [...created, ctx('ec2:CreateAction', ['CreateLaunchTemplate'])],
      },
      {
        PolicySourceArn: CONTROLLER_ROLE,
        MaxItems: 1000,
        ActionNames: ['ec2:CreateTags'],
        ResourceArns: [
          `${EC2}:fleet/*`,
          `${EC2}:instance/*`,
          `${EC2}:volume/*`,
          `${EC2}:network-interface/*`,
        ],
        ContextEntries: [...created, ctx('ec2:CreateAction', ['CreateFleet'])],
      },
      {
        PolicySourceArn: CONTROLLER_ROLE,
        MaxItems: 1000,
        ActionNames: ['ec2:CreateTags'],
        ResourceArns: [`${EC2}:instance/*`, `${EC2}:volume/*`, `${EC2}:network-interface/*`],
        ContextEntries: [...created, ctx('ec2:CreateAction', ['RunInstances'])],
      },
      {
        PolicySourceArn: CONTROLLER_ROLE,
        MaxItems: 1000,
        ActionNames: ['ec2:RunInstances', 'ec2:CreateFleet'],
        ResourceArns: [`${EC2}:launch-template/*`],
        ContextEntries: [...tags.request, REGION, ...tags.resource, tags.keys],
      },
      {
        PolicySourceArn: CONTROLLER_ROLE,
        MaxItems: 1000,
        ActionNames: ['iam:PassRole'],
        ResourceArns: [NODE_ROLE],
        ContextEntries: [REGION, ctx('iam:PassedToService', ['ec2.amazonaws.com'])],
      },
      {
        // Creating the profile: its tags are the request's (it has none yet).
        PolicySourceArn: CONTROLLER_ROLE,
        MaxItems: 1000,
        ActionNames: ['iam:CreateInstanceProfile'],
        ResourceArns: [PROFILE],
        ContextEntries: [
          ...PROFILE_TAGS.request,
          // IAM's own calls carry its endpoint's region.
          REGION,
          PROFILE_TAGS.keys,
        ],
      },
      {
        // Calls on the existing profile (only v1.0 also tagged it; the cluster runs v1.7.0).
        PolicySourceArn: CONTROLLER_ROLE,
        MaxItems: 1000,
        ActionNames: [
          'iam:GetInstanceProfile',
          'iam:AddRoleToInstanceProfile',
          'iam:RemoveRoleFromInstanceProfile',
          'iam:DeleteInstanceProfile',
        ],
        ResourceArns: [PROFILE],
        ContextEntries: [REGION, ...PROFILE_TAGS.resource],
      },
      {
        // The discovery requests and ListInstanceProfiles (IAM's region is us-east-1 too) share
        // their context: one simulation of all their pairs.
        PolicySourceArn: CONTROLLER_ROLE,
        MaxItems: 1000,
        ActionNames: [
          'iam:ListInstanceProfiles',
          'ec2:DescribeCapacityReservations',
          'ec2:DescribeImages',
          'ec2:DescribeInstances',
          'ec2:DescribeInstanceTypeOfferings',
          'ec2:DescribeInstanceTypes',
          'ec2:DescribeLaunchTemplates',
          'ec2:DescribeSecurityGroups',
          'ec2:DescribeSpotPriceHistory',
          'ec2:DescribeSubnets',
          'eks:DescribeCluster',
          'ssm:GetParameter',
        ],
        ResourceArns: [
          '*',
          'arn:aws:eks:us-east-1:111122223333:cluster/demo',
          'arn:aws:ssm:us-east-1::parameter/aws/service/eks/optimized-ami/*',
        ],
        ContextEntries: [REGION],
      },
    ]);
  });

  it("sends an instanceProfile-mode NodeClass' profile role, reservation and custom parameter, and no profile calls", async () => {
    answer();
    const tags = requestTags('gpu', '');

    await scan('gpu');

    expect(inputs().map((input) => input.ActionNames?.[0])).toEqual([
      'ec2:CreateLaunchTemplate',
      'ec2:CreateTags',
      'ec2:CreateTags',
      'ec2:CreateTags',
      'ec2:RunInstances',
      'iam:PassRole',
      'ec2:DescribeCapacityReservations',
    ]);
    expect(inputFor(['iam:PassRole'], GPU_NODE_ROLE)).toEqual({
      PolicySourceArn: CONTROLLER_ROLE,
      MaxItems: 1000,
      ActionNames: ['iam:PassRole'],
      ResourceArns: [GPU_NODE_ROLE],
      ContextEntries: [REGION, ctx('iam:PassedToService', ['ec2.amazonaws.com'])],
    });
    // The existing resources share the create calls' context, so their simulation.
    const launch = ['ec2:CreateLaunchTemplate', 'ec2:CreateFleet', 'ec2:RunInstances'];
    expect(inputFor(launch, `${EC2}:subnet/subnet-ccc`)).toEqual({
      PolicySourceArn: CONTROLLER_ROLE,
      MaxItems: 1000,
      ActionNames: launch,
      ResourceArns: [
        `${EC2}:launch-template/*`,
        `${EC2}:fleet/*`,
        `${EC2}:instance/*`,
        `${EC2}:volume/*`,
        `${EC2}:network-interface/*`,
        'arn:aws:ec2:us-east-1::image/ami-0fedcba9876543210',
        'arn:aws:ec2:us-east-1::snapshot/*',
        `${EC2}:subnet/subnet-ccc`,
        `${EC2}:security-group/sg-222`,
        `${EC2}:security-group/sg-333`,
        `${EC2}:capacity-reservation/cr-0abc`,
      ],
      ContextEntries: [...tags.request, REGION, tags.keys],
    });
    expect(
      inputs().find(
        (input) =>
          input.ActionNames?.includes('ssm:GetParameter') &&
          input.ResourceArns?.includes('arn:aws:ssm:us-east-1:111122223333:parameter/team/gpu/ami')
      )
    ).toBeDefined();
  });

  it('simulates identical requests of two NodeClasses once', async () => {
    answer();

    await scan();

    const discovery = inputs().filter((input) => input.ActionNames?.includes('ec2:DescribeImages'));
    expect(discovery).toHaveLength(1);
  });
});

describe('iam-simulator: interpretation of results', () => {
  it.each([
    ['allowed', {}, 'pass', undefined],
    ['implicitDeny', { EvalResourceDecision: 'implicitDeny' }, 'fail', 'not allowed by any policy'],
    [
      'explicitDeny by SCP',
      {
        EvalResourceDecision: 'explicitDeny',
        OrganizationsDecisionDetail: { AllowedByOrganizations: false },
      },
      'fail',
      'service control policy',
    ],
    [
      'denied by the permissions boundary',
      {
        EvalResourceDecision: 'implicitDeny',
        PermissionsBoundaryDecisionDetail: { AllowedByPermissionsBoundary: false },
      },
      'fail',
      'permissions boundary',
    ],
    [
      'explicitDeny by an identity policy',
      {
        EvalResourceDecision: 'explicitDeny',
        MatchedStatements: [{ SourcePolicyId: 'DenyPassRole', SourcePolicyType: 'IAM Policy' }],
      },
      'fail',
      'matched: DenyPassRole',
    ],
    [
      'missing context',
      { MissingContextValues: ['aws:PrincipalTag/kubernetes-pod-name'] },
      'error',
      'aws:PrincipalTag/kubernetes-pod-name',
    ],
  ])('%s → %s', async (_name, detail, status, text) => {
    // Prepare: the detail applies to PassRole on the node role only.
    iamMock
      .on(SimulatePrincipalPolicyCommand)
      .callsFake((input: SimulatePrincipalPolicyCommandInput) => {
        const organizations = (detail as { OrganizationsDecisionDetail?: unknown })
          .OrganizationsDecisionDetail;
        return {
          EvaluationResults: (input.ActionNames ?? []).map((action) => ({
            EvalActionName: action,
            EvalDecision: 'allowed',
            ...(action === 'iam:PassRole' && organizations
              ? { OrganizationsDecisionDetail: organizations }
              : {}),
            ResourceSpecificResults: (input.ResourceArns ?? []).map((resource) => ({
              EvalResourceName: resource,
              EvalResourceDecision: 'allowed',
              ...(action === 'iam:PassRole' ? detail : {}),
            })),
          })),
        };
      });

    // Act
    const inventory = await scan('default');
    const [finding] = controllerCanPassNodeRole.evaluate(inventory, { now });

    // Assess
    expect(finding?.status).toBe(status);
    if (text !== undefined) expect(finding?.message).toContain(text);
  });

  it('reads old-style per-resource results without ResourceSpecificResults', async () => {
    iamMock
      .on(SimulatePrincipalPolicyCommand)
      .callsFake((input: SimulatePrincipalPolicyCommandInput) => ({
        EvaluationResults: (input.ActionNames ?? []).flatMap((action) =>
          (input.ResourceArns ?? ['*']).map((resource) => ({
            EvalActionName: action,
            EvalResourceName: resource,
            EvalDecision: action === 'ec2:CreateLaunchTemplate' ? 'implicitDeny' : 'allowed',
          }))
        ),
      }));

    const [finding] = controllerCanLaunch.evaluate(await scan('default'), { now });

    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain(`ec2:CreateLaunchTemplate on ${EC2}:launch-template/*`);
  });
});

describe('iam-simulator adapter', () => {
  const request: SimulationRequest = {
    key: 'k',
    kind: 'use-existing-resources',
    group: 'launch',
    principalArn: CONTROLLER_ROLE,
    actions: ['ec2:RunInstances'],
    resourceArns: Array.from({ length: 45 }, (_, index) => `${EC2}:subnet/subnet-${index}`),
    context: [{ key: 'aws:TagKeys', type: 'stringList', values: ['a', 'b'] }],
  };

  it("asks for IAM's largest page, 1,000 results: 3 actions × 300 resources in one call", async () => {
    iamMock.on(SimulatePrincipalPolicyCommand).resolves({ EvaluationResults: [] });
    await createIamSimulator(new IAMClient({})).simulate({
      ...request,
      actions: ['ec2:RunInstances', 'ec2:CreateFleet', 'ec2:CreateTags'],
      resourceArns: Array.from(
        { length: 300 },
        (_, index) => `arn:aws:ec2:us-east-1:111122223333:subnet/subnet-${index}`
      ),
    });
    expect(
      inputs().map((input) => [
        input.ActionNames?.length,
        input.ResourceArns?.length,
        input.MaxItems,
      ])
    ).toEqual([[3, 300, 1000]]);
  });

  it('cuts a request into calls of at most the page asked for (actions × resources) and follows Marker pages', async () => {
    iamMock
      .on(SimulatePrincipalPolicyCommand)
      .callsFake((input: SimulatePrincipalPolicyCommandInput) => ({
        EvaluationResults: [
          {
            EvalActionName: input.ActionNames?.[0],
            EvalResourceName: input.ResourceArns?.[0],
            // The Marker page brings a result of its own (a page of only repeats is refused).
            EvalDecision: input.Marker === undefined ? 'allowed' : 'implicitDeny',
          },
        ],
        IsTruncated: input.Marker === undefined && input.ResourceArns?.length === 1,
        Marker: 'page-2',
      }));

    // At IAM's default page (100): 45 resources × 1 action, one call; 3 actions × 45 resources,
    // 33 per call (99 results).
    const defaultPage = { resultsPerCall: 100 };
    await createIamSimulator(new IAMClient({}), defaultPage).simulate(request);
    const threeActions = {
      ...request,
      actions: ['ec2:RunInstances', 'ec2:CreateFleet', 'ec2:CreateTags'],
    };
    await createIamSimulator(new IAMClient({}), defaultPage).simulate(threeActions);
    // A page that says it is truncated is followed with its Marker.
    const results = await createIamSimulator(new IAMClient({}), { resultsPerCall: 1 }).simulate({
      ...request,
      resourceArns: request.resourceArns.slice(0, 2),
    });

    const sent = inputs();
    expect(
      sent.map((input) => [
        input.ActionNames?.length,
        input.ResourceArns?.length,
        input.MaxItems,
        input.Marker,
      ])
    ).toEqual([
      [1, 45, 100, undefined],
      [3, 33, 100, undefined],
      [3, 12, 100, undefined],
      [1, 1, 1, undefined],
      [1, 1, 1, 'page-2'],
      [1, 1, 1, undefined],
      [1, 1, 1, 'page-2'],
    ]);
    expect(sent[0]?.ContextEntries).toEqual([ctx('aws:TagKeys', ['a', 'b'], 'stringList')]);
    expect(results).toHaveLength(4);
  });

  it('turns throttling into a SourceUnavailableError with reason throttled', async () => {
    iamMock.on(SimulatePrincipalPolicyCommand).rejects(
      new IAMServiceException({
        name: 'Throttling',
        $fault: 'client',
        $metadata: { httpStatusCode: 400 },
        message: 'Rate exceeded',
      })
    );

    const error = await createIamSimulator(new IAMClient({}))
      .simulate(request)
      .catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(SourceUnavailableError);
    expect((error as SourceUnavailableError).reason).toBe('throttled');
  });

  it('declares the action it calls', () => {
    expect(iamSimulatorActions).toContain('iam:SimulatePrincipalPolicy');
    for (const action of iamSimulatorActions)
      expect(Object.values(DECLARED_ACTIONS).flat()).toContain(action);
  });
});

describe('iam role policy reader', () => {
  const ROLE = 'arn:aws:iam::111122223333:role/KarpenterController';
  const doc = (sid: string) =>
    JSON.stringify({
      Version: '2012-10-17',
      Statement: [{ Sid: sid, Effect: 'Allow', Action: 'ec2:*', Resource: '*' }],
    });

  beforeEach(() => {
    iamMock.reset();
    iamMock.on(ListRolePoliciesCommand).resolves({ PolicyNames: ['inline'], IsTruncated: false });
    iamMock
      .on(GetRolePolicyCommand)
      .resolves({ PolicyDocument: encodeURIComponent(doc('inline')) });
    iamMock.on(GetPolicyCommand).callsFake((input: { PolicyArn: string }) => ({
      Policy: { Arn: input.PolicyArn, DefaultVersionId: 'v3' },
    }));
    iamMock
      .on(GetPolicyVersionCommand)
      .callsFake((input: { PolicyArn: string; VersionId: string }) => ({
        PolicyVersion: {
          Document: encodeURIComponent(
            doc(`${input.PolicyArn.split('/').at(-1)} ${input.VersionId}`)
          ),
        },
      }));
  });

  it('reads inline, attached (default version) and boundary policies; a managed policy once', async () => {
    // Prepare
    iamMock.on(GetRoleCommand).resolves({
      Role: {
        RoleName: 'KarpenterController',
        Arn: ROLE,
        Path: '/',
        RoleId: 'AROA',
        CreateDate: now,
        PermissionsBoundary: {
          PermissionsBoundaryArn: 'arn:aws:iam::111122223333:policy/Boundary',
        },
      },
    });
    iamMock.on(ListAttachedRolePoliciesCommand).resolves({
      AttachedPolicies: [{ PolicyArn: 'arn:aws:iam::111122223333:policy/Karpenter' }],
      IsTruncated: false,
    });
    const reader = createIamRolePolicyReader(new IAMClient({}));

    // Act
    const first = await reader.policySet?.(ROLE);
    await reader.policySet?.(ROLE);

    // Assess
    expect(first).toEqual({
      identity: [doc('inline'), doc('Karpenter v3')],
      // Named as IAM's MatchedStatements name them: inline by name, managed by the ARN's last part.
      identityNames: ['inline', 'Karpenter'],
      boundary: doc('Boundary v3'),
      boundaryName: 'Boundary',
    });
    expect(iamMock.commandCalls(GetPolicyVersionCommand)).toHaveLength(2);
  });

  it('takes a role the scan already read as it is: no second GetRole or ListAttachedRolePolicies', async () => {
    // Prepare
    const reader = createIamRolePolicyReader(new IAMClient({}));

    // Act
    const set = await reader.policySet?.(ROLE, {
      name: 'KarpenterController',
      arn: ROLE,
      permissionsBoundaryArn: 'arn:aws:iam::111122223333:policy/Boundary',
      attachedPolicyArns: ['arn:aws:iam::111122223333:policy/Karpenter'],
    });

    // Assess
    expect(set).toEqual({
      identity: [doc('inline'), doc('Karpenter v3')],
      // Named as IAM's MatchedStatements name them: inline by name, managed by the ARN's last part.
      identityNames: ['inline', 'Karpenter'],
      boundary: doc('Boundary v3'),
      boundaryName: 'Boundary',
    });
    expect(iamMock.commandCalls(GetRoleCommand)).toHaveLength(0);
    expect(iamMock.commandCalls(ListAttachedRolePoliciesCommand)).toHaveLength(0);
  });
});
