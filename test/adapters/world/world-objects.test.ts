import { describe, expect, it } from 'vitest';
import { parseWorld } from '../../../lambda/adapters/world/load-world.js';
import { WorldSchema } from '../../../lambda/adapters/world/schema.js';
import {
  createWorldObjectSource,
  selectWorldCluster,
} from '../../../lambda/adapters/world/world-objects.js';
import { aNodeClassObject } from '../../support/builders.js';

function aWorld(clusters: unknown[], extra: Record<string, unknown> = {}) {
  return WorldSchema.parse({
    version: 1,
    account: '111122223333',
    region: 'us-east-1',
    eks: { clusters },
    ...extra,
  });
}

describe('world object source', () => {
  it('builds cluster contexts with AWS facts, controller and pod identity from the world', async () => {
    // Prepare
    const world = aWorld([
      {
        name: 'prod',
        version: '1.32',
        resourcesVpcConfig: {
          vpcId: 'vpc-1',
          endpointPublicAccess: false,
          endpointPrivateAccess: true,
        },
        accessConfig: { authenticationMode: 'API' },
        accessEntries: [{ principalArn: 'arn:aws:iam::111122223333:role/Node', type: 'EC2_LINUX' }],
        podIdentityAssociations: [
          {
            namespace: 'karpenter',
            serviceAccount: 'karpenter',
            roleArn: 'arn:aws:iam::111122223333:role/Ctl',
          },
        ],
        kubernetes: {
          karpenterVersion: 'v1.2.1',
          karpenterNamespace: 'karpenter',
          serviceAccounts: [
            {
              namespace: 'karpenter',
              name: 'karpenter',
              annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::111122223333:role/Irsa' },
            },
          ],
          ec2NodeClasses: [
            aNodeClassObject({ name: 'a' }),
            { kind: 'ConfigMap', apiVersion: 'v1' },
          ],
        },
      },
    ]);

    // Act
    const loaded = await createWorldObjectSource({ world, file: 'w.json' }).load();

    // Assess
    expect(loaded.inputs).toEqual(['spec', 'cluster']);
    expect(loaded.nodeClasses.map((entry) => [entry.cluster, entry.name, entry.parsed.ok])).toEqual(
      [['prod', 'a', true]]
    );
    expect(loaded.inputErrors).toEqual([
      {
        source: 'w.json: eks.clusters[0].kubernetes.ec2NodeClasses[1]',
        message: expect.stringContaining('not a EC2NodeClass'),
      },
    ]);
    const [cluster] = loaded.clusters;
    expect(cluster?.karpenterVersion?.raw).toBe('v1.2.1');
    expect(cluster?.aws).toMatchObject({
      status: 'ok',
      value: {
        accountId: '111122223333',
        kubernetesVersion: '1.32',
        vpcId: 'vpc-1',
        authenticationMode: 'API',
        accessEntries: {
          status: 'ok',
          value: [
            {
              principalArn: 'arn:aws:iam::111122223333:role/Node',
              type: 'EC2_LINUX',
              kubernetesGroups: [],
            },
          ],
        },
      },
    });
    expect(cluster?.state).toMatchObject({
      read: { status: 'ok', value: { nodeClassCount: 1 } },
      endpointAccess: { publicAccess: false, privateAccess: true },
      controller: {
        status: 'ok',
        value: {
          namespace: 'karpenter',
          serviceAccount: 'karpenter',
          irsaRoleArn: 'arn:aws:iam::111122223333:role/Irsa',
        },
      },
      podIdentityAssociations: {
        status: 'ok',
        value: [{ roleArn: 'arn:aws:iam::111122223333:role/Ctl' }],
      },
    });
  });

  it.each([
    ['403', 'access-denied', { kind: 'http', httpStatus: 403 }],
    ['401', 'access-denied', { kind: 'http', httpStatus: 401 }],
    ['404', 'not-installed', { kind: 'http', httpStatus: 404 }],
    ['timeout', 'timeout', { kind: 'timeout' }],
  ])('simulates a Kubernetes read error %s', async (readError, reason, failure) => {
    // Prepare
    const world = aWorld([
      {
        name: 'c',
        kubernetes: { readError, ec2NodeClasses: [aNodeClassObject({ name: 'hidden' })] },
      },
    ]);

    // Act
    const loaded = await createWorldObjectSource({ world, file: 'w.json' }).load();

    // Assess: the cluster's objects are unreadable, so none are scanned.
    expect(loaded.nodeClasses).toEqual([]);
    expect(loaded.clusters[0]?.state?.read).toMatchObject({ status: 'unavailable', reason });
    expect(loaded.clusters[0]?.state?.readFailure).toMatchObject(failure);
  });

  it('reports only spec input when the world has no Kubernetes section', async () => {
    // Act
    const loaded = await createWorldObjectSource({
      world: aWorld([{ name: 'c' }]),
      file: 'w',
    }).load();

    // Assess
    expect(loaded.inputs).toEqual(['spec']);
    expect(loaded.clusters[0]?.state).toBeUndefined();
  });

  it('refuses a partition that contradicts the region', async () => {
    // Prepare
    const world = aWorld([{ name: 'c' }], { partition: 'aws-cn' });

    // Act & Assess
    await expect(createWorldObjectSource({ world, file: 'w.json' }).load()).rejects.toThrow(
      'partition: "aws-cn" does not match region "us-east-1"'
    );
  });

  it('picks the only cluster, or the named one', () => {
    // Prepare
    const one = aWorld([{ name: 'only' }]);
    const two = aWorld([{ name: 'a' }, { name: 'b' }]);

    // Act & Assess
    expect(selectWorldCluster(one, 'w').name).toBe('only');
    expect(selectWorldCluster(two, 'w', 'b').name).toBe('b');
    expect(() => selectWorldCluster(two, 'w')).toThrow('choose one with --cluster');
    expect(() => selectWorldCluster(two, 'w', 'zzz')).toThrow('no cluster "zzz"');
  });
});

describe('world file parsing', () => {
  it('names the JSON path of each problem', () => {
    // Act & Assess
    expect(() =>
      parseWorld(
        JSON.stringify({ version: 2, account: '12', region: 'us-east-1', iam: { roles: [{}] } }),
        'w.json'
      )
    ).toThrow(
      /w\.json: not a valid world file: version: .*; account: account must be a 12-digit AWS account id; iam\.roles\[0\]\.RoleName/
    );
  });
});
