// The live adapter under the real enricher: 200 NodeClasses over 10 clusters issue only the
// distinct AWS requests, and persistent throttling of some requests becomes `error` findings
// exactly where data is missing.
import {
  DescribeCapacityReservationsCommand,
  DescribeImagesCommand,
  type DescribeImagesCommandInput,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  EC2Client,
  EC2ServiceException,
} from '@aws-sdk/client-ec2';
import {
  GetInstanceProfileCommand,
  GetRoleCommand,
  IAMClient,
  IAMServiceException,
  ListAttachedRolePoliciesCommand,
} from '@aws-sdk/client-iam';
import {
  GetParameterCommand,
  GetParametersCommand,
  type GetParametersCommandInput,
  ParameterNotFound,
  SSMClient,
} from '@aws-sdk/client-ssm';
import { type AwsClientStub, mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createLiveAwsFacts } from '../../../lambda/adapters/aws/aws-facts-adapter.js';
import { createAwsFactsEnricher } from '../../../lambda/app/collect-aws-facts.js';
import { collectInventory, evaluateInventory } from '../../../lambda/app/run-scan.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import { type ClusterContext, nodeClassKey } from '../../../lambda/core/inventory.js';
import { aNodeClassEntry, aNodeClassObject } from '../../support/builders.js';

const NOW = new Date('2026-11-22T12:00:00Z');
const ACCOUNT = '111122223333';
const K8S = '1.32';
const ALIAS_X86 = `/aws/service/eks/optimized-ami/${K8S}/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-${K8S}-v20251103/image_id`;

const ec2 = mockClient(EC2Client);
const ssm = mockClient(SSMClient);
const iam = mockClient(IAMClient);

/** Five selector sets shared by the 200 NodeClasses (NodeClass i uses set i % 5). */
const SELECTOR_SETS: readonly (Record<string, unknown> & {
  role?: string | undefined;
  securityGroupSelectorTerms?: unknown[];
})[] = [
  { amiSelectorTerms: [{ alias: 'al2023@v20251103' }], role: 'NodeRole-0' },
  {
    amiSelectorTerms: [{ name: 'platform-al2023-*', owner: 'self' }],
    role: 'NodeRole-1',
    capacityReservationSelectorTerms: [{ id: 'cr-0123456789abcdef0' }],
  },
  { amiSelectorTerms: [{ tags: { team: 'platform' } }], role: 'NodeRole-2' },
  {
    amiSelectorTerms: [{ id: 'ami-0000000000000c003' }],
    role: 'NodeRole-3',
    securityGroupSelectorTerms: [{ name: 'karpenter-nodes' }],
  },
  {
    amiFamily: 'AL2023',
    amiSelectorTerms: [{ ssmParameter: '/platform/ami' }],
    instanceProfile: 'NodeProfile-4',
    role: undefined,
    securityGroupSelectorTerms: [{ name: 'karpenter-nodes' }],
  },
];

function fleet(): { clusters: ClusterContext[]; objects: ReturnType<typeof aNodeClassEntry>[] } {
  const clusters: ClusterContext[] = Array.from({ length: 10 }, (_, index) => ({
    name: `cluster-${index}`,
    region: 'us-east-1',
    partition: 'aws',
    aws: ok({
      accountId: ACCOUNT,
      kubernetesVersion: K8S,
      vpcId: 'vpc-a',
      authenticationMode: 'API',
      accessEntries: ok(
        [0, 1, 2, 3].map((role) => ({
          principalArn: `arn:aws:iam::${ACCOUNT}:role/NodeRole-${role}`,
          type: 'EC2_LINUX',
          kubernetesGroups: [],
        }))
      ),
    }),
  }));
  const objects = Array.from({ length: 200 }, (_, index) => {
    const { role, ...spec } = SELECTOR_SETS[index % 5] ?? {};
    const raw = aNodeClassObject({
      name: `nc-${index}`,
      spec: {
        ...spec,
        subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'shared' } }],
        securityGroupSelectorTerms: spec.securityGroupSelectorTerms ?? [
          { tags: { 'karpenter.sh/discovery': 'shared' } },
        ],
      },
    });
    const withRole = raw as { spec: Record<string, unknown> };
    if (role === undefined) delete withRole.spec.role;
    else withRole.spec.role = role;
    return aNodeClassEntry(raw, `cluster-${index % 10}`);
  });
  return { clusters, objects };
}

const IMAGE = (id: string, name: string) => ({
  ImageId: id,
  Name: name,
  OwnerId: ACCOUNT,
  State: 'available' as const,
  Architecture: 'x86_64' as const,
  CreationDate: '2026-11-01T00:00:00.000Z',
});

/** Each image-id query finds its image; every other query finds the platform image. */
function imagesAnswer(input: DescribeImagesCommandInput) {
  const ids = input.Filters?.find((filter) => filter.Name === 'image-id')?.Values ?? [];
  return {
    Images:
      ids.length > 0
        ? ids.map((id) => IMAGE(id, id))
        : [IMAGE('ami-0000000000000c001', 'platform-al2023-1')],
  };
}

const SUBNETS_ANSWER = {
  Subnets: [{ SubnetId: 'subnet-1', VpcId: 'vpc-a', AvailableIpAddressCount: 500 }],
};
const SECURITY_GROUPS_ANSWER = {
  SecurityGroups: [{ GroupId: 'sg-1', GroupName: 'karpenter-nodes', VpcId: 'vpc-a' }],
};

/** Every role exists, named as asked. */
function roleAnswer(input: { RoleName: string }) {
  return {
    Role: {
      RoleName: input.RoleName,
      Arn: `arn:aws:iam::${ACCOUNT}:role/${input.RoleName}`,
      Path: '/',
      RoleId: 'AROAEXAMPLE',
      CreateDate: new Date('2025-01-01T00:00:00Z'),
    },
  };
}

function answerEverything(): void {
  ec2.on(DescribeImagesCommand).callsFake(imagesAnswer);
  ec2.on(DescribeSubnetsCommand).resolves(SUBNETS_ANSWER);
  ec2.on(DescribeSecurityGroupsCommand).resolves(SECURITY_GROUPS_ANSWER);
  ec2.on(DescribeCapacityReservationsCommand).resolves({
    CapacityReservations: [
      { CapacityReservationId: 'cr-0123456789abcdef0', State: 'active', OwnerId: ACCOUNT },
    ],
  });
  ssm
    .on(GetParameterCommand)
    .rejects(new ParameterNotFound({ message: 'missing', $metadata: { httpStatusCode: 400 } }));
  ssm.on(GetParameterCommand, { Name: ALIAS_X86 }).resolves({
    Parameter: { Name: ALIAS_X86, Value: 'ami-0000000000000c000', Type: 'String' },
  });
  ssm.on(GetParameterCommand, { Name: '/platform/ami' }).resolves({
    Parameter: { Name: '/platform/ami', Value: 'ami-0000000000000c004', Type: 'String' },
  });
  ssm.on(GetParametersCommand).callsFake((input: GetParametersCommandInput) => {
    const known: Record<string, string> = {
      [ALIAS_X86]: 'ami-0000000000000c000',
      '/platform/ami': 'ami-0000000000000c004',
    };
    const names = input.Names ?? [];
    return {
      Parameters: names.flatMap((name) =>
        known[name] === undefined ? [] : [{ Name: name, Value: known[name], Type: 'String' }]
      ),
      InvalidParameters: names.filter((name) => known[name] === undefined),
    };
  });
  iam.on(GetRoleCommand).callsFake(roleAnswer);
  iam.on(ListAttachedRolePoliciesCommand).resolves({ AttachedPolicies: [], IsTruncated: false });
  iam.on(GetInstanceProfileCommand).resolves({
    InstanceProfile: {
      InstanceProfileName: 'NodeProfile-4',
      InstanceProfileId: 'AIPAEXAMPLE',
      Arn: `arn:aws:iam::${ACCOUNT}:instance-profile/NodeProfile-4`,
      Path: '/',
      CreateDate: new Date('2025-01-01T00:00:00Z'),
      Roles: [
        {
          RoleName: 'NodeRole-0',
          RoleId: 'AROAEXAMPLE',
          Arn: `arn:aws:iam::${ACCOUNT}:role/NodeRole-0`,
          Path: '/',
          CreateDate: new Date('2025-01-01T00:00:00Z'),
        },
      ],
    },
  });
}

function inputsOf(
  mock: AwsClientStub<EC2Client> | AwsClientStub<SSMClient> | AwsClientStub<IAMClient>,
  command: Parameters<AwsClientStub<EC2Client>['commandCalls']>[0]
): string[] {
  return (mock as AwsClientStub<EC2Client>)
    .commandCalls(command)
    .map((call) => JSON.stringify(call.args[0].input));
}

function plan(clusters: ClusterContext[], objects: ReturnType<typeof aNodeClassEntry>[]) {
  return {
    objects: {
      load: async () => ({
        clusters,
        nodeClasses: objects,
        nodePools: [],
        inputs: ['spec' as const],
        inputErrors: [],
      }),
    },
    enrichers: [
      createAwsFactsEnricher({
        port: createLiveAwsFacts({
          ec2: new EC2Client({ region: 'us-east-1' }),
          ssm: new SSMClient({ region: 'us-east-1' }),
          iam: new IAMClient({ region: 'us-east-1' }),
        }),
        now: NOW,
      }),
    ],
  };
}

beforeEach(() => {
  ec2.reset();
  ssm.reset();
  iam.reset();
});

describe('live adapter at fleet scale', () => {
  it('issues exactly the distinct requests for 200 NodeClasses over 10 clusters sharing 5 selectors', async () => {
    // Prepare
    answerEverything();
    const { clusters, objects } = fleet();

    // Act
    const { inventory } = await collectInventory(plan(clusters, objects));

    // Assess: 5 image query plans, sent without the state filter (applied locally); the alias',
    // the id term's and the ssmParameter's image-id queries merged into one call.
    expect(inventory.awsFacts.size).toBe(200);
    const images = inputsOf(ec2, DescribeImagesCommand);
    expect(images).toHaveLength(3);
    expect(new Set(images).size).toBe(3);
    const idValues = images.flatMap((input) =>
      (JSON.parse(input) as { Filters: { Name: string; Values: string[] }[] }).Filters.filter(
        (filter) => filter.Name === 'image-id'
      ).map((filter) => filter.Values.length)
    );
    expect(idValues).toHaveLength(1);
    expect(idValues[0]).toBeGreaterThanOrEqual(3);
    expect(images.some((input) => input.includes('"state"'))).toBe(false);
    expect(images.every((input) => JSON.parse(input).MaxResults === 1000)).toBe(true);
    // Alias: 5 AL2023 parameters for 1.32; ssmParameter: 1 — one GetParameters request.
    expect(
      inputsOf(ssm, GetParametersCommand).map((input) => JSON.parse(input).Names.length)
    ).toEqual([6]);
    expect(inputsOf(ssm, GetParameterCommand)).toHaveLength(0);
    expect(inputsOf(ec2, DescribeSubnetsCommand)).toHaveLength(1);
    // Tag term and name term.
    expect(inputsOf(ec2, DescribeSecurityGroupsCommand)).toHaveLength(2);
    expect(inputsOf(ec2, DescribeCapacityReservationsCommand)).toEqual([
      JSON.stringify({
        Filters: [{ Name: 'state', Values: ['active'] }],
        CapacityReservationIds: ['cr-0123456789abcdef0'],
      }),
    ]);
    // NodeRole-0 is shared by spec.role and the instance profile's role.
    expect(
      inputsOf(iam, GetRoleCommand)
        .map((input) => JSON.parse(input).RoleName)
        .sort()
    ).toEqual(['NodeRole-0', 'NodeRole-1', 'NodeRole-2', 'NodeRole-3']);
    expect(inputsOf(iam, ListAttachedRolePoliciesCommand)).toHaveLength(4);
    expect(inputsOf(iam, GetInstanceProfileCommand)).toHaveLength(1);
  });

  it('completes with 30% of requests throttled and reports errors only where data is missing', async () => {
    // Prepare: a deterministic 3-in-10 of the distinct requests stay throttled after SDK retries.
    answerEverything();
    const throttledRequests = new Set<string>();
    let distinct = 0;
    const seen = new Map<string, boolean>();
    const throttleSome = (service: string) => (input: unknown) => {
      const key = `${service} ${JSON.stringify(input)}`;
      if (!seen.has(key)) {
        distinct += 1;
        seen.set(key, distinct % 10 === 3 || distinct % 10 === 6 || distinct % 10 === 9);
      }
      if (seen.get(key)) {
        throttledRequests.add(key);
        return true;
      }
      return false;
    };
    const ec2Throttled = throttleSome('ec2');
    ec2.on(DescribeSubnetsCommand).callsFake(async (input: unknown) => {
      if (ec2Throttled(input)) throw ec2Throttle();
      return SUBNETS_ANSWER;
    });
    ec2.on(DescribeSecurityGroupsCommand).callsFake(async (input: unknown) => {
      if (ec2Throttled(input)) throw ec2Throttle();
      return SECURITY_GROUPS_ANSWER;
    });
    ec2.on(DescribeImagesCommand).callsFake(async (input: DescribeImagesCommandInput) => {
      if (ec2Throttled(input)) throw ec2Throttle();
      return imagesAnswer(input);
    });
    const iamThrottled = throttleSome('iam');
    iam.on(GetRoleCommand).callsFake(async (input: { RoleName: string }) => {
      if (iamThrottled(input)) {
        throw new IAMServiceException({
          name: 'Throttling',
          $fault: 'client',
          $metadata: { httpStatusCode: 400 },
          message: 'Rate exceeded',
        });
      }
      return roleAnswer(input);
    });
    const { clusters, objects } = fleet();

    // Act
    const { inventory } = await collectInventory(plan(clusters, objects));
    const report = evaluateInventory(inventory, { now: NOW });

    // Assess
    expect(throttledRequests.size).toBeGreaterThan(0);
    expect(report.summary.nodeClasses).toBe(200);
    const errors = report.findings.filter((finding) => finding.status === 'error');
    expect(errors.length).toBeGreaterThan(0);
    expect(report.findings.some((finding) => finding.status === 'pass')).toBe(true);
    for (const finding of errors)
      expect(finding.message).toMatch(/throttl|Rate exceeded|RequestLimitExceeded/i);
    // An error exactly where the NodeClass's facts are unavailable, per check input.
    const sliceOf: Record<string, 'subnets' | 'securityGroups' | 'nodeRole'> = {
      'subnets-resolve': 'subnets',
      'security-groups-resolve': 'securityGroups',
      'node-role-valid': 'nodeRole',
    };
    for (const [checkId, slice] of Object.entries(sliceOf)) {
      for (const finding of report.findings.filter((item) => item.checkId === checkId)) {
        const facts = inventory.awsFacts.get(
          nodeClassKey(finding.resource.cluster, finding.resource.name)
        );
        expect({ checkId, name: finding.resource.name, error: finding.status === 'error' }).toEqual(
          {
            checkId,
            name: finding.resource.name,
            error: facts?.[slice]?.status === 'unavailable',
          }
        );
      }
    }
  });
});

function ec2Throttle(): EC2ServiceException {
  return new EC2ServiceException({
    name: 'RequestLimitExceeded',
    $fault: 'client',
    $metadata: { httpStatusCode: 503 },
    message: 'Request limit exceeded.',
  });
}
