// `--controller-policy` in the live modes: the documents answer the simulations instead of IAM
// (no iam:SimulatePrincipalPolicy is sent), while the class' resources are resolved live and, with
// --cluster, the controller role is still found in the cluster.
import { join } from 'node:path';
import { EC2Client } from '@aws-sdk/client-ec2';
import {
  DescribeClusterCommand,
  EKSClient,
  ListAccessEntriesCommand,
  ListPodIdentityAssociationsCommand,
} from '@aws-sdk/client-eks';
import { GetRoleCommand, IAMClient, SimulatePrincipalPolicyCommand } from '@aws-sdk/client-iam';
import { SSMClient } from '@aws-sdk/client-ssm';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { NamedPolicy } from '../../lambda/core/facts/permissions.js';
import type { ScanReport } from '../../lambda/core/report.js';
import {
  generatePki,
  sendJson,
  startApiServer,
  statusBody,
  type TestApiServer,
} from '../adapters/kube/tls-fixtures.js';
import { aNodeClassObject } from '../support/builders.js';
import { policyVariants } from '../support/karpenter-controller-policy.js';
import { ACCESS_DENIED, eksCluster } from '../support/live-aws-mocks.js';
import {
  answerEdgeResources,
  controllerPolicyFlags,
  EDGE_MANIFEST,
  edgeReferencePolicies,
} from './support/edge-manifest.js';
import { runCliCaptured, useTempTrees } from './support/run-cli.js';

const ACCOUNT = '111122223333';
const eks = mockClient(EKSClient);
const ec2 = mockClient(EC2Client);
const iam = mockClient(IAMClient);
const ssm = mockClient(SSMClient);
const sts = mockClient(STSClient);
const tree = useTempTrees();
let server: TestApiServer;
let caPem: string;

beforeAll(async () => {
  const pki = generatePki();
  caPem = pki.caPem;
  server = await startApiServer(pki);
});

afterAll(async () => {
  await server.close();
  for (const mock of [eks, ec2, iam, ssm, sts]) mock.restore();
});

beforeEach(() => {
  eks.reset().onAnyCommand().rejects(ACCESS_DENIED);
  ec2.reset().onAnyCommand().rejects(ACCESS_DENIED);
  iam.reset().onAnyCommand().rejects(ACCESS_DENIED);
  ssm.reset().onAnyCommand().rejects(ACCESS_DENIED);
  sts.reset().on(GetCallerIdentityCommand).resolves({ Account: ACCOUNT });
});

const policyFlags = (policies: readonly NamedPolicy[]) => controllerPolicyFlags(tree, policies);

function finding(report: ScanReport, checkId: string) {
  return report.findings.find((item) => item.checkId === checkId);
}

describe('scan --aws manifests --controller-policy', () => {
  const CONTROLLER = `arn:aws:iam::${ACCOUNT}:role/KarpenterControllerRole-demo`;
  const reference = () => edgeReferencePolicies(ACCOUNT);

  beforeEach(() => {
    answerEdgeResources(ec2, iam, { account: ACCOUNT });
  });

  async function scan(policies: readonly NamedPolicy[]) {
    const dir = tree({ 'edge.yaml': EDGE_MANIFEST });
    const run = await runCliCaptured([
      'scan',
      '--aws',
      '--region',
      'us-east-1',
      '--controller-role',
      `demo=${CONTROLLER}`,
      ...policyFlags(policies),
      '--only',
      'controller-can-launch,controller-can-pass-node-role',
      '--format',
      'json',
      join(dir, 'edge.yaml'),
    ]);
    return { ...run, report: JSON.parse(run.stdout) as ScanReport };
  }

  it("simulates the class' live-resolved resources against the documents, never asking IAM", async () => {
    // Act
    const run = await scan(reference());

    // Assess
    expect(run.stderr).toBe('');
    expect(finding(run.report, 'controller-can-launch')?.status).toBe('pass');
    expect(finding(run.report, 'controller-can-pass-node-role')?.status).toBe('pass');
    expect(finding(run.report, 'controller-can-launch')?.evidence.notes).toEqual([
      expect.stringContaining('IAM was not asked'),
    ]);
    expect(iam.commandCalls(SimulatePrincipalPolicyCommand)).toEqual([]);
  });

  it('names the resolved subnet a policy leaves out, not a wildcard', async () => {
    // Act: a Deny on every subnet but none
    const run = await scan(
      policyVariants.denyEc2OutsideSubnets(reference(), {
        partition: 'aws',
        region: 'us-east-1',
        allowedSubnetArns: [],
      })
    );

    // Assess
    const launch = finding(run.report, 'controller-can-launch');
    expect(launch?.status).toBe('fail');
    expect(launch?.message).toContain(`arn:aws:ec2:us-east-1:${ACCOUNT}:subnet/subnet-1`);
    expect(launch?.message).not.toContain('wildcard');
  });
});

describe('scan --aws manifests --controller-policy with a Spot NodePool', () => {
  const CONTROLLER = `arn:aws:iam::${ACCOUNT}:role/KarpenterControllerRole-demo`;
  const SPOT_POOL = [
    'apiVersion: karpenter.sh/v1',
    'kind: NodePool',
    'metadata: { name: spot }',
    'spec:',
    '  template:',
    '    spec:',
    '      nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: edge }',
    '      requirements: [{ key: karpenter.sh/capacity-type, operator: In, values: [spot] }]',
    '',
  ].join('\n');

  async function scanSpot() {
    const dir = tree({ 'edge.yaml': `${EDGE_MANIFEST}---\n${SPOT_POOL}` });
    const run = await runCliCaptured([
      'scan',
      '--aws',
      '--region',
      'us-east-1',
      '--controller-role',
      `demo=${CONTROLLER}`,
      ...policyFlags(edgeReferencePolicies(ACCOUNT)),
      '--only',
      'nodepool-spot-service-linked-role',
      '--format',
      'json',
      join(dir, 'edge.yaml'),
    ]);
    return JSON.parse(run.stdout) as ScanReport;
  }

  it('reads whether the account has AWSServiceRoleForEC2Spot from IAM, as the documents cannot say', async () => {
    // Arrange
    iam.on(GetRoleCommand, { RoleName: 'AWSServiceRoleForEC2Spot' }).resolves({
      Role: {
        RoleName: 'AWSServiceRoleForEC2Spot',
        Arn: `arn:aws:iam::${ACCOUNT}:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot`,
        Path: '/aws-service-role/spot.amazonaws.com/',
        RoleId: 'AROASPOT',
        CreateDate: new Date('2025-01-01T00:00:00Z'),
      },
    });

    // Act
    const report = await scanSpot();

    // Assess
    expect(finding(report, 'nodepool-spot-service-linked-role')).toMatchObject({
      status: 'pass',
      evidence: { reason: 'role-exists' },
    });
    expect(iam.commandCalls(GetRoleCommand, { RoleName: 'AWSServiceRoleForEC2Spot' })).toHaveLength(
      1
    );
  });

  it('fails when the role is absent and the documents do not let the controller create it', async () => {
    // Arrange
    iam
      .on(GetRoleCommand, { RoleName: 'AWSServiceRoleForEC2Spot' })
      .rejects(Object.assign(new Error('no such role'), { name: 'NoSuchEntity' }));

    // Act
    const report = await scanSpot();

    // Assess
    expect(finding(report, 'nodepool-spot-service-linked-role')).toMatchObject({
      status: 'fail',
      evidence: { reason: 'not-creatable' },
    });
    expect(iam.commandCalls(SimulatePrincipalPolicyCommand)).toEqual([]);
  });
});

describe('scan --cluster --controller-policy', () => {
  const IRSA_ROLE = `arn:aws:iam::${ACCOUNT}:role/KarpenterControllerRole-prod`;

  beforeEach(() => {
    server.requests.length = 0;
    eks.on(DescribeClusterCommand).resolves(eksCluster('prod', server.endpoint, caPem));
    eks.on(ListAccessEntriesCommand).resolves({ accessEntries: [] });
    eks.on(ListPodIdentityAssociationsCommand).resolves({ associations: [] });
    const routes: Record<string, unknown> = {
      '/apis/karpenter.k8s.aws/v1/ec2nodeclasses': { items: [aNodeClassObject()] },
      '/apis/karpenter.sh/v1/nodepools': { items: [] },
      '/apis/apps/v1/deployments': {
        items: [
          {
            metadata: {
              name: 'karpenter',
              namespace: 'karpenter',
              labels: { 'app.kubernetes.io/name': 'karpenter' },
            },
            spec: {
              template: {
                spec: {
                  serviceAccountName: 'karpenter',
                  containers: [
                    { name: 'controller', image: 'public.ecr.aws/karpenter/controller:1.14.1' },
                  ],
                },
              },
            },
          },
        ],
      },
      '/api/v1/namespaces/karpenter/serviceaccounts/karpenter': {
        metadata: {
          name: 'karpenter',
          annotations: { 'eks.amazonaws.com/role-arn': IRSA_ROLE },
        },
      },
    };
    server.handle((_req, res, url) => {
      const body = routes[url.pathname];
      if (body !== undefined) sendJson(res, 200, body);
      else sendJson(res, 404, statusBody(404, 'NotFound', `${url.pathname} not found`));
    });
  });

  it('finds the controller role in the cluster and simulates it with the documents', async () => {
    // Prepare: only discovery is allowed
    const flags = policyFlags([
      {
        name: 'discovery-only',
        document: JSON.stringify({
          Version: '2012-10-17',
          Statement: [
            {
              Sid: 'Discover',
              Effect: 'Allow',
              Action: ['ec2:Describe*', 'ssm:GetParameter', 'eks:DescribeCluster'],
              Resource: '*',
            },
          ],
        }),
      },
    ]);

    // Act
    const run = await runCliCaptured([
      'scan',
      '--cluster',
      'prod',
      '--region',
      'us-east-1',
      ...flags,
      '--only',
      'controller-role-found,controller-can-discover,controller-can-manage-instance-profile',
      '--format',
      'json',
    ]);

    // Assess
    const report = JSON.parse(run.stdout) as ScanReport;
    expect(finding(report, 'controller-role-found')).toMatchObject({
      status: 'pass',
      message: expect.stringContaining(`${IRSA_ROLE} (irsa)`),
    });
    expect(finding(report, 'controller-can-discover')?.status).toBe('pass');
    expect(finding(report, 'controller-can-manage-instance-profile')).toMatchObject({
      status: 'fail',
      message: expect.stringContaining(`for controller role ${IRSA_ROLE}`),
    });
    // IAM denies everything here: had it been asked, the checks would be errors.
    expect(iam.commandCalls(SimulatePrincipalPolicyCommand)).toEqual([]);
  });
});
