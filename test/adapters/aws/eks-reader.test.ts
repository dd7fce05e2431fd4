import {
  DescribeAccessEntryCommand,
  DescribeClusterCommand,
  DescribePodIdentityAssociationCommand,
  EKSClient,
  ListAccessEntriesCommand,
  ListClustersCommand,
  ListPodIdentityAssociationsCommand,
} from '@aws-sdk/client-eks';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createEksReader, eksReaderActions } from '../../../lambda/adapters/aws/eks-reader.js';
import { SourceUnavailableError } from '../../../lambda/shared/errors.js';

const eksMock = mockClient(EKSClient);
const CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

function reader() {
  return createEksReader({ eks: new EKSClient({ region: 'eu-west-1' }) });
}

function clusterResponse(name: string, tags: Record<string, string> = {}) {
  return {
    cluster: {
      name,
      arn: `arn:aws:eks:eu-west-1:123456789012:cluster/${name}`,
      status: 'ACTIVE' as const,
      version: '1.33',
      endpoint: `https://${name}.gr7.eu-west-1.eks.amazonaws.com`,
      certificateAuthority: { data: Buffer.from(CA_PEM).toString('base64') },
      resourcesVpcConfig: {
        vpcId: 'vpc-1',
        endpointPublicAccess: false,
        endpointPrivateAccess: true,
      },
      accessConfig: { authenticationMode: 'API' as const },
      tags,
    },
  };
}

beforeEach(() => {
  eksMock.reset();
});

describe('eks-reader', () => {
  it('declares every EKS action it calls', () => {
    expect([...eksReaderActions].sort()).toEqual([
      'eks:DescribeAccessEntry',
      'eks:DescribeCluster',
      'eks:DescribePodIdentityAssociation',
      'eks:ListAccessEntries',
      'eks:ListClusters',
      'eks:ListPodIdentityAssociations',
    ]);
  });

  it('lists clusters across pages', async () => {
    // Prepare
    eksMock
      .on(ListClustersCommand, { nextToken: undefined })
      .resolves({ clusters: ['a', 'b'], nextToken: 't1' })
      .on(ListClustersCommand, { nextToken: 't1' })
      .resolves({ clusters: ['c'] });

    // Act
    const names = await reader().listClusters();

    // Assess
    expect(names).toEqual(['a', 'b', 'c']);
    expect(
      eksMock.commandCalls(ListClustersCommand).map((call) => call.args[0].input.nextToken)
    ).toEqual([undefined, 't1']);
  });

  it('fails a listing whose tokens go round (A, B, A), naming it, instead of looping', async () => {
    // Prepare: a new entry on every page, so only the tokens show the loop
    let served = 0;
    eksMock.on(ListAccessEntriesCommand).callsFake(async (input: { nextToken?: string }) => {
      served += 1;
      return {
        accessEntries: [`arn:aws:iam::123456789012:role/r${served}`],
        nextToken: input.nextToken === 'A' ? 'B' : 'A',
      };
    });

    // Act
    const failure = await reader()
      .listAccessEntries('prod')
      .catch((error: unknown) => error);

    // Assess
    expect(failure).toBeInstanceOf(SourceUnavailableError);
    expect(failure).toMatchObject({
      source: 'eks:ListAccessEntries prod',
      reason: 'invalid-response',
    });
    expect((failure as Error).message).toContain(
      'eks:ListAccessEntries prod pagination repeated an earlier token after 3 pages'
    );
    expect(eksMock.commandCalls(ListAccessEntriesCommand)).toHaveLength(3);
    expect(eksMock.commandCalls(DescribeAccessEntryCommand)).toHaveLength(0);
  });

  it('keeps only clusters whose tags match the filter, describing each once', async () => {
    // Prepare
    eksMock.on(ListClustersCommand).resolves({ clusters: ['a', 'b', 'c'] });
    eksMock
      .on(DescribeClusterCommand, { name: 'a' })
      .resolves(clusterResponse('a', { team: 'x', scan: 'yes' }))
      .on(DescribeClusterCommand, { name: 'b' })
      .resolves(clusterResponse('b', { team: 'y', scan: 'yes' }))
      .on(DescribeClusterCommand, { name: 'c' })
      .resolves(clusterResponse('c', { team: 'x' }));
    const eks = reader();

    // Act
    const names = await eks.listClusters({ team: 'x', scan: '*' });
    await eks.describeCluster('a');

    // Assess
    expect(names).toEqual(['a']);
    expect(eksMock.commandCalls(DescribeClusterCommand)).toHaveLength(3);
  });

  it('maps DescribeCluster to endpoint, decoded CA, VPC, auth mode and endpoint access', async () => {
    // Prepare
    eksMock.on(DescribeClusterCommand).resolves(clusterResponse('prod'));

    // Act
    const cluster = await reader().describeCluster('prod');

    // Assess
    expect(cluster).toEqual({
      name: 'prod',
      arn: 'arn:aws:eks:eu-west-1:123456789012:cluster/prod',
      accountId: '123456789012',
      status: 'ACTIVE',
      kubernetesVersion: '1.33',
      endpoint: 'https://prod.gr7.eu-west-1.eks.amazonaws.com',
      caPem: CA_PEM,
      vpcId: 'vpc-1',
      authenticationMode: 'API',
      endpointAccess: { publicAccess: false, privateAccess: true },
      tags: {},
    });
    expect(eksMock.commandCalls(DescribeClusterCommand)[0]?.args[0].input).toEqual({
      name: 'prod',
    });
  });

  it('turns a missing cluster into a SourceUnavailableError and does not cache it', async () => {
    // Prepare
    const notFound = Object.assign(new Error('No cluster found for name: gone.'), {
      name: 'ResourceNotFoundException',
      $metadata: { httpStatusCode: 404 },
    });
    eksMock.on(DescribeClusterCommand).rejectsOnce(notFound).resolves(clusterResponse('gone'));
    const eks = reader();

    // Act
    const failure = await eks.describeCluster('gone').catch((error: unknown) => error);
    const retried = await eks.describeCluster('gone');

    // Assess
    expect(failure).toBeInstanceOf(SourceUnavailableError);
    expect((failure as SourceUnavailableError).reason).toBe('not-found');
    expect((failure as SourceUnavailableError).source).toBe('eks:DescribeCluster gone');
    expect(retried.name).toBe('gone');
  });

  it('lists and describes access entries', async () => {
    // Prepare
    eksMock
      .on(ListAccessEntriesCommand, { clusterName: 'prod', nextToken: undefined })
      .resolves({ accessEntries: ['arn:aws:iam::1:role/node'], nextToken: 'n' })
      .on(ListAccessEntriesCommand, { clusterName: 'prod', nextToken: 'n' })
      .resolves({ accessEntries: ['arn:aws:iam::1:role/admin'] });
    eksMock
      .on(DescribeAccessEntryCommand, { principalArn: 'arn:aws:iam::1:role/node' })
      .resolves({
        accessEntry: { principalArn: 'arn:aws:iam::1:role/node', type: 'EC2_LINUX' },
      })
      .on(DescribeAccessEntryCommand, { principalArn: 'arn:aws:iam::1:role/admin' })
      .resolves({
        accessEntry: {
          principalArn: 'arn:aws:iam::1:role/admin',
          type: 'STANDARD',
          kubernetesGroups: ['nodeclass-scanner'],
        },
      });

    // Act
    const entries = await reader().listAccessEntries('prod');

    // Assess
    expect(entries).toEqual([
      { principalArn: 'arn:aws:iam::1:role/node', type: 'EC2_LINUX', kubernetesGroups: [] },
      {
        principalArn: 'arn:aws:iam::1:role/admin',
        type: 'STANDARD',
        kubernetesGroups: ['nodeclass-scanner'],
      },
    ]);
    expect(
      eksMock.commandCalls(DescribeAccessEntryCommand).map((call) => call.args[0].input)
    ).toEqual([
      { clusterName: 'prod', principalArn: 'arn:aws:iam::1:role/node' },
      { clusterName: 'prod', principalArn: 'arn:aws:iam::1:role/admin' },
    ]);
  });

  it('leaves out an access entry deleted between the listing and its description', async () => {
    // Prepare
    eksMock
      .on(ListAccessEntriesCommand)
      .resolves({ accessEntries: ['arn:aws:iam::1:role/gone', 'arn:aws:iam::1:role/node'] });
    eksMock
      .on(DescribeAccessEntryCommand, { principalArn: 'arn:aws:iam::1:role/gone' })
      .rejects(
        Object.assign(new Error('No access entry found'), {
          name: 'ResourceNotFoundException',
          $metadata: { httpStatusCode: 404 },
        })
      )
      .on(DescribeAccessEntryCommand, { principalArn: 'arn:aws:iam::1:role/node' })
      .resolves({
        accessEntry: { principalArn: 'arn:aws:iam::1:role/node', type: 'EC2_LINUX' },
      });

    // Act
    const entries = await reader().listAccessEntries('prod');

    // Assess
    expect(entries).toEqual([
      { principalArn: 'arn:aws:iam::1:role/node', type: 'EC2_LINUX', kubernetesGroups: [] },
    ]);
  });

  it('classifies access denied on ListAccessEntries', async () => {
    // Prepare
    eksMock.on(ListAccessEntriesCommand).rejects(
      Object.assign(new Error('not authorized'), {
        name: 'AccessDeniedException',
        $metadata: { httpStatusCode: 403 },
      })
    );

    // Act
    const failure = await reader()
      .listAccessEntries('prod')
      .catch((error: unknown) => error);

    // Assess
    expect((failure as SourceUnavailableError).reason).toBe('access-denied');
  });

  it('describes the Pod Identity associations of a ServiceAccount', async () => {
    // Prepare
    eksMock.on(ListPodIdentityAssociationsCommand).resolves({
      associations: [{ associationId: 'a-1', namespace: 'karpenter', serviceAccount: 'karpenter' }],
    });
    eksMock.on(DescribePodIdentityAssociationCommand).resolves({
      association: {
        associationId: 'a-1',
        namespace: 'karpenter',
        serviceAccount: 'karpenter',
        roleArn: 'arn:aws:iam::1:role/prod-karpenter',
        targetRoleArn: 'arn:aws:iam::2:role/karpenter',
        disableSessionTags: false,
      },
    });

    // Act
    const associations = await reader().listPodIdentityAssociations('prod', {
      namespace: 'karpenter',
      serviceAccount: 'karpenter',
    });

    // Assess
    expect(associations).toEqual([
      {
        namespace: 'karpenter',
        serviceAccount: 'karpenter',
        roleArn: 'arn:aws:iam::1:role/prod-karpenter',
        targetRoleArn: 'arn:aws:iam::2:role/karpenter',
        disableSessionTags: false,
      },
    ]);
    expect(eksMock.commandCalls(ListPodIdentityAssociationsCommand)[0]?.args[0].input).toEqual({
      clusterName: 'prod',
      namespace: 'karpenter',
      serviceAccount: 'karpenter',
      nextToken: undefined,
    });
    expect(eksMock.commandCalls(DescribePodIdentityAssociationCommand)[0]?.args[0].input).toEqual({
      clusterName: 'prod',
      associationId: 'a-1',
    });
  });
});
