import {
  DescribeAccessEntryCommand,
  DescribeClusterCommand,
  DescribePodIdentityAssociationCommand,
  EKSClient,
  ListAccessEntriesCommand,
  ListClustersCommand,
  ListPodIdentityAssociationsCommand,
  ResourceNotFoundException,
} from '@aws-sdk/client-eks';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEksReader } from '../../../lambda/adapters/aws/eks-reader.js';
import { createEksTokenProvider } from '../../../lambda/adapters/aws/eks-token.js';
import {
  type ClusterProgress,
  createClusterSource,
} from '../../../lambda/adapters/kube/cluster-source.js';
import { collectInventory, evaluateInventory } from '../../../lambda/app/run-scan.js';
import { scannerCanReadCluster } from '../../../lambda/core/checks/scanner-can-read-cluster.js';
import { aNodeClassCrd, aNodePoolCrd, fakeAdmissionEngine } from '../../support/admission-crds.js';
import { aKarpenterVersion, aNodeClassObject } from '../../support/builders.js';
import {
  generatePki,
  sendJson,
  startApiServer,
  statusBody,
  type TestApiServer,
  type TestPki,
} from './tls-fixtures.js';

const eksMock = mockClient(EKSClient);
const now = new Date('2026-11-01T12:00:00Z');

let pki: TestPki;
let server: TestApiServer;
let closedEndpoint: string;

const KARPENTER_DEPLOYMENT = {
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
          {
            name: 'controller',
            image: 'public.ecr.aws/karpenter/controller:1.2.1@sha256:abc',
            env: [
              { name: 'CLUSTER_NAME', value: 'good' },
              { name: 'DISABLE_DRY_RUN', value: 'false' },
              { name: 'FROM_SECRET', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
            ],
          },
        ],
      },
    },
  },
};

function describeResponse(name: string, endpoint: string, privateOnly = false) {
  return {
    cluster: {
      name,
      arn: `arn:aws:eks:eu-west-1:123456789012:cluster/${name}`,
      status: 'ACTIVE' as const,
      version: '1.33',
      endpoint,
      certificateAuthority: { data: Buffer.from(pki.caPem).toString('base64') },
      resourcesVpcConfig: {
        vpcId: 'vpc-1',
        endpointPublicAccess: !privateOnly,
        endpointPrivateAccess: true,
      },
      accessConfig: { authenticationMode: 'API_AND_CONFIG_MAP' as const },
    },
  };
}

type Route = Parameters<TestApiServer['handle']>[0];

/** A healthy API server holding two NodeClasses (in two pages), a NodePool and Karpenter. */
function serveCluster(overrides: Record<string, Route> = {}): void {
  const routes: Record<string, Route> = {
    '/apis/karpenter.k8s.aws/v1/ec2nodeclasses': (_req, res, url) => {
      if (url.searchParams.get('continue') === null) {
        // Items without apiVersion/kind, as some API servers return them in lists.
        const { apiVersion: _a, kind: _k, ...first } = aNodeClassObject({ name: 'first' });
        sendJson(res, 200, { metadata: { continue: 'next' }, items: [first] });
      } else {
        sendJson(res, 200, {
          items: [aNodeClassObject({ name: 'second', spec: { subnetSelectorTerms: 'bad' } })],
        });
      }
    },
    '/apis/karpenter.sh/v1/nodepools': (_req, res) =>
      sendJson(res, 200, {
        items: [
          {
            apiVersion: 'karpenter.sh/v1',
            kind: 'NodePool',
            metadata: { name: 'default' },
            spec: { template: { spec: { nodeClassRef: { name: 'first' } } } },
          },
        ],
      }),
    '/apis/apps/v1/deployments': (_req, res) =>
      sendJson(res, 200, { items: [KARPENTER_DEPLOYMENT] }),
    '/api/v1/namespaces/karpenter/serviceaccounts/karpenter': (_req, res) =>
      sendJson(res, 200, {
        metadata: {
          name: 'karpenter',
          annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/kc' },
        },
      }),
    ...overrides,
  };
  server.handle((req, res, url) => {
    const route = routes[url.pathname];
    if (route) route(req, res, url);
    else sendJson(res, 404, statusBody(404, 'NotFound', `${url.pathname} not found`));
  });
}

function source(
  clusters: string[],
  extra: Partial<Parameters<typeof createClusterSource>[0]> = {}
) {
  return createClusterSource({
    region: 'eu-west-1',
    clusters,
    eks: createEksReader({ eks: new EKSClient({ region: 'eu-west-1' }) }),
    tokens: createEksTokenProvider({
      region: 'eu-west-1',
      credentials: async () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }),
      now: () => now,
    }),
    readTimeoutMs: 300,
    connectTimeoutMs: 2_000,
    ...extra,
  });
}

async function readFindings(clusters: string[], extra = {}) {
  const { inventory } = await collectInventory({ objects: source(clusters, extra) });
  return evaluateInventory(inventory, { now, checks: [scannerCanReadCluster] }).findings;
}

beforeAll(async () => {
  pki = generatePki();
  server = await startApiServer(pki);
  const closed = await startApiServer(pki);
  closedEndpoint = closed.endpoint;
  await closed.close();
});

afterAll(async () => {
  await server.close();
});

beforeEach(() => {
  eksMock.reset();
  server.requests.length = 0;
  eksMock.on(ListAccessEntriesCommand).resolves({ accessEntries: [] });
  eksMock.on(ListPodIdentityAssociationsCommand).resolves({ associations: [] });
});

describe('cluster-source', () => {
  it('reads NodeClasses, NodePools and the controller of a live cluster', async () => {
    // Prepare
    eksMock.on(DescribeClusterCommand).resolves(describeResponse('good', server.endpoint));
    eksMock.on(ListPodIdentityAssociationsCommand).resolves({
      associations: [{ associationId: 'a-1' }],
    });
    eksMock.on(DescribePodIdentityAssociationCommand).resolves({
      association: {
        namespace: 'karpenter',
        serviceAccount: 'karpenter',
        roleArn: 'arn:aws:iam::123456789012:role/pod-identity',
      },
    });
    serveCluster();

    // Act
    const loaded = await source(['good']).load();

    // Assess
    expect(loaded.inputs).toEqual(['spec', 'cluster']);
    expect(loaded.inputErrors).toEqual([]);
    expect(loaded.nodeClasses.map((entry) => [entry.cluster, entry.name, entry.parsed.ok])).toEqual(
      [
        ['good', 'first', true],
        ['good', 'second', false],
      ]
    );
    expect(loaded.nodePools.map((entry) => entry.name)).toEqual(['default']);
    const [cluster] = loaded.clusters;
    expect(cluster?.partition).toBe('aws');
    expect(cluster?.region).toBe('eu-west-1');
    expect(cluster?.karpenterVersion?.raw).toBe('1.2.1');
    expect(cluster?.state?.read).toEqual({ status: 'ok', value: { nodeClassCount: 2 } });
    expect(cluster?.state?.nodePools).toEqual({ status: 'ok', value: { nodePoolCount: 1 } });
    expect(cluster?.state?.controller).toEqual({
      status: 'ok',
      value: {
        namespace: 'karpenter',
        deploymentName: 'karpenter',
        serviceAccount: 'karpenter',
        version: '1.2.1',
        irsaRoleArn: 'arn:aws:iam::123456789012:role/kc',
        clusterNameEnv: 'good',
        env: { CLUSTER_NAME: 'good', DISABLE_DRY_RUN: 'false' },
      },
    });
    expect(cluster?.state?.podIdentityAssociations).toEqual({
      status: 'ok',
      value: [
        {
          namespace: 'karpenter',
          serviceAccount: 'karpenter',
          roleArn: 'arn:aws:iam::123456789012:role/pod-identity',
        },
      ],
    });
    expect(
      eksMock.commandCalls(ListPodIdentityAssociationsCommand)[0]?.args[0].input
    ).toMatchObject({ clusterName: 'good', namespace: 'karpenter', serviceAccount: 'karpenter' });
    expect(cluster?.aws).toEqual({
      status: 'ok',
      value: {
        accountId: '123456789012',
        arn: 'arn:aws:eks:eu-west-1:123456789012:cluster/good',
        kubernetesVersion: '1.33',
        endpoint: server.endpoint,
        vpcId: 'vpc-1',
        authenticationMode: 'API_AND_CONFIG_MAP',
        accessEntries: { status: 'ok', value: [] },
      },
    });
    expect(
      server.requests.every((request) => request.authorization?.startsWith('Bearer k8s-aws-v1.'))
    ).toBe(true);
  });

  it('finds the controller by image name when it lacks the chart labels', async () => {
    // Prepare
    eksMock.on(DescribeClusterCommand).resolves(describeResponse('good', server.endpoint));
    const mirrored = {
      metadata: { name: 'kp', namespace: 'platform' },
      spec: {
        template: {
          spec: {
            containers: [
              { name: 'sidecar', image: 'busybox:1' },
              { name: 'manager', image: 'registry.local/mirror/karpenter-controller:v1.7.2' },
            ],
          },
        },
      },
    };
    serveCluster({
      '/apis/apps/v1/deployments': (_req, res, url) =>
        sendJson(res, 200, {
          items:
            url.searchParams.get('labelSelector') === null
              ? [
                  {
                    metadata: { name: 'web', namespace: 'x' },
                    spec: {
                      template: { spec: { containers: [{ name: 'web', image: 'nginx:1' }] } },
                    },
                  },
                  mirrored,
                ]
              : [],
        }),
    });

    // Act
    const [cluster] = (await source(['good']).load()).clusters;

    // Assess
    expect(cluster?.karpenterVersion?.raw).toBe('v1.7.2');
    expect(cluster?.state?.controller).toEqual({
      status: 'ok',
      value: {
        namespace: 'platform',
        deploymentName: 'kp',
        serviceAccount: 'default',
        version: 'v1.7.2',
        env: {},
      },
    });
  });

  it('records no controller, and keeps the fallback version, when Karpenter is not found', async () => {
    // Prepare
    eksMock.on(DescribeClusterCommand).resolves(describeResponse('good', server.endpoint));
    serveCluster({
      '/apis/apps/v1/deployments': (_req, res) => sendJson(res, 200, { items: [] }),
    });

    // Act
    const [cluster] = (
      await source(['good'], { fallbackKarpenterVersion: aKarpenterVersion('1.5.0') }).load()
    ).clusters;

    // Assess
    expect(cluster?.state?.controller).toEqual({ status: 'ok', value: undefined });
    expect(cluster?.karpenterVersion?.raw).toBe('1.5.0');
  });

  it('records a forbidden controller read without losing the NodeClasses', async () => {
    // Prepare
    eksMock.on(DescribeClusterCommand).resolves(describeResponse('good', server.endpoint));
    serveCluster({
      '/apis/apps/v1/deployments': (_req, res) =>
        sendJson(res, 403, statusBody(403, 'Forbidden', 'deployments.apps is forbidden')),
    });

    // Act
    const loaded = await source(['good']).load();

    // Assess
    expect(loaded.nodeClasses).toHaveLength(2);
    expect(loaded.clusters[0]?.state?.controller).toMatchObject({
      status: 'unavailable',
      reason: 'access-denied',
    });
  });

  it.each([
    [401, 'fail', 'access-denied'],
    [403, 'fail', 'access-denied'],
    [404, 'not-applicable', 'not-installed'],
    [500, 'error', 'unreachable'],
  ] as const)(
    'maps HTTP %i on the NodeClass list to a %s finding',
    async (status, findingStatus, reason) => {
      // Prepare
      eksMock.on(DescribeClusterCommand).resolves(describeResponse('good', server.endpoint));
      serveCluster({
        '/apis/karpenter.k8s.aws/v1/ec2nodeclasses': (_req, res) =>
          sendJson(res, status, statusBody(status, 'Failure', `status ${status}`)),
      });

      // Act
      const [finding] = await readFindings(['good']);

      // Assess
      expect(finding?.status).toBe(findingStatus);
      expect(finding?.evidence).toMatchObject({
        reason,
        endpoint: server.endpoint,
        failure: { kind: 'http', httpStatus: status },
      });
    }
  );

  it('maps a hang past the read timeout to an error naming the endpoint and the VPC need', async () => {
    // Prepare
    eksMock.on(DescribeClusterCommand).resolves(describeResponse('good', server.endpoint, true));
    serveCluster({
      '/apis/karpenter.k8s.aws/v1/ec2nodeclasses': () => {
        // never answers
      },
    });

    // Act
    const [finding] = await readFindings(['good']);

    // Assess
    expect(finding?.status).toBe('error');
    expect(finding?.evidence).toMatchObject({ reason: 'timeout', failure: { kind: 'timeout' } });
    expect(finding?.message).toContain(server.endpoint);
    expect(finding?.message).toContain('needs VPC access');
  });

  it('maps malformed JSON to an error', async () => {
    // Prepare
    eksMock.on(DescribeClusterCommand).resolves(describeResponse('good', server.endpoint));
    serveCluster({
      '/apis/karpenter.k8s.aws/v1/ec2nodeclasses': (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"items": [{');
      },
    });

    // Act
    const [finding] = await readFindings(['good']);

    // Assess
    expect(finding?.status).toBe('error');
    expect(finding?.evidence).toMatchObject({
      reason: 'invalid-response',
      failure: { kind: 'malformed' },
    });
    expect(finding?.message).toContain('malformed JSON');
  });

  it('keeps scanning the other clusters when one is unreachable or unknown, reporting progress', async () => {
    // Prepare
    eksMock
      .on(DescribeClusterCommand, { name: 'good' })
      .resolves(describeResponse('good', server.endpoint))
      .on(DescribeClusterCommand, { name: 'down' })
      .resolves(describeResponse('down', closedEndpoint))
      .on(DescribeClusterCommand, { name: 'typo' })
      .rejects(
        Object.assign(new Error('No cluster found for name: typo.'), {
          name: 'ResourceNotFoundException',
        })
      );
    serveCluster();
    const progress: ClusterProgress[] = [];

    // Act
    const loaded = await source(['down', 'good', 'typo'], {
      onProgress: (event) => progress.push(event),
      concurrency: 1,
    }).load();
    const { inventory } = await collectInventory({ objects: source(['down', 'good', 'typo']) });
    const findings = evaluateInventory(inventory, {
      now,
      checks: [scannerCanReadCluster],
    }).findings;

    // Assess
    expect(loaded.nodeClasses.map((entry) => entry.cluster)).toEqual(['good', 'good']);
    expect(loaded.inputErrors).toEqual([
      { source: 'cluster typo', message: 'no EKS cluster "typo" in eu-west-1' },
    ]);
    expect(
      progress.map(({ cluster, index, total, outcome }) => [cluster, index, total, outcome])
    ).toEqual([
      ['down', 1, 3, 'unavailable'],
      ['good', 2, 3, 'ok'],
      ['typo', 3, 3, 'unavailable'],
    ]);
    expect(
      Object.fromEntries(findings.map((finding) => [finding.resource.name, finding.status]))
    ).toEqual({ down: 'error', good: 'pass', typo: 'error' });
  });

  it('discovers clusters by tag when no names are given', async () => {
    // Prepare
    eksMock.on(ListClustersCommand).resolves({ clusters: ['good', 'skip'] });
    eksMock
      .on(DescribeClusterCommand, { name: 'good' })
      .resolves({
        cluster: { ...describeResponse('good', server.endpoint).cluster, tags: { scan: 'yes' } },
      })
      .on(DescribeClusterCommand, { name: 'skip' })
      .resolves({ cluster: { ...describeResponse('skip', server.endpoint).cluster, tags: {} } });
    serveCluster();

    // Act
    const loaded = await createClusterSource({
      region: 'eu-west-1',
      discover: { tagFilter: { scan: 'yes' } },
      eks: createEksReader({ eks: new EKSClient({ region: 'eu-west-1' }) }),
      tokens: { token: async () => 'k8s-aws-v1.x' },
    }).load();

    // Assess
    expect(loaded.clusters.map((cluster) => cluster.name)).toEqual(['good']);
    expect(eksMock.commandCalls(DescribeClusterCommand)).toHaveLength(2);
  });

  describe("Karpenter's installed CRDs", () => {
    const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

    it('reads both CRDs, keeps what admission needs, and admits the objects by them', async () => {
      // Prepare
      eksMock.on(DescribeClusterCommand).resolves(describeResponse('good', server.endpoint));
      serveCluster({
        [`${CRDS}/ec2nodeclasses.karpenter.k8s.aws`]: (_req, res) =>
          sendJson(res, 200, aNodeClassCrd({ ipv6Default: false })),
        [`${CRDS}/nodepools.karpenter.sh`]: (_req, res) => sendJson(res, 200, aNodePoolCrd()),
      });
      const { engine, loads } = fakeAdmissionEngine();

      // Act
      const { inventory } = await collectInventory(
        { objects: source(['good']) },
        { admission: engine }
      );
      const findings = evaluateInventory(inventory, {
        now,
        checks: [scannerCanReadCluster],
      }).findings;

      // Assess
      const crds = inventory.clusters[0]?.crds;
      expect(crds?.unavailable).toBeUndefined();
      expect(crds?.nodeClass?.origin).toEqual({ kind: 'cluster', location: 'cluster good' });
      expect(crds?.nodePool?.name).toBe('nodepools.karpenter.sh');
      // Neither the server's bookkeeping nor a second copy of the document is kept.
      expect(crds?.nodeClass?.document).toMatchObject({ metadata: { annotations: {} } });
      expect(crds?.nodeClass?.document).not.toHaveProperty('status');
      expect(crds?.nodeClass?.document).not.toHaveProperty('metadata.managedFields');
      expect(loads).toEqual([
        'ec2nodeclasses.karpenter.k8s.aws cluster good',
        'nodepools.karpenter.sh cluster good',
      ]);
      expect(inventory.nodeClasses.map((entry) => entry.admission?.crd)).toEqual([
        'ec2nodeclasses.karpenter.k8s.aws from cluster good',
        'ec2nodeclasses.karpenter.k8s.aws from cluster good',
      ]);
      expect(inventory.nodePools[0]?.admission?.crd).toBe(
        'nodepools.karpenter.sh from cluster good'
      );
      expect(findings.map((finding) => finding.status)).toEqual(['pass']);
      const paths = server.requests.map((request) => request.url.pathname);
      expect(paths.filter((path) => path.startsWith(CRDS)).sort()).toEqual([
        `${CRDS}/ec2nodeclasses.karpenter.k8s.aws`,
        `${CRDS}/nodepools.karpenter.sh`,
      ]);
    });

    it('falls back to the built-in rules when RBAC forbids the CRDs, and says so with the fix', async () => {
      // Prepare
      eksMock.on(DescribeClusterCommand).resolves(describeResponse('good', server.endpoint));
      const forbidden: Route = (_req, res, url) =>
        sendJson(res, 403, statusBody(403, 'Forbidden', `${url.pathname} is forbidden`));
      serveCluster({
        [`${CRDS}/ec2nodeclasses.karpenter.k8s.aws`]: forbidden,
        [`${CRDS}/nodepools.karpenter.sh`]: forbidden,
      });
      let imported = false;

      // Act
      const { inventory } = await collectInventory(
        { objects: source(['good']) },
        {
          admission: async () => {
            imported = true;
            throw new Error('no CRD was read: the engine must not load');
          },
        }
      );
      const findings = evaluateInventory(inventory, {
        now,
        checks: [scannerCanReadCluster],
      }).findings;

      // Assess
      expect(imported).toBe(false);
      expect(inventory.nodeClasses).toHaveLength(2);
      expect(inventory.nodeClasses.every((entry) => entry.admission === undefined)).toBe(true);
      const crds = inventory.clusters[0]?.crds;
      expect(crds?.denied).toBe(true);
      expect(crds?.unavailable).toBe(
        'the CRD ec2nodeclasses.karpenter.k8s.aws may not be read (HTTP 403: RBAC lacks get on customresourcedefinitions "ec2nodeclasses.karpenter.k8s.aws"); the CRD nodepools.karpenter.sh may not be read (HTTP 403: RBAC lacks get on customresourcedefinitions "nodepools.karpenter.sh")'
      );
      const notice = findings.find((finding) => finding.status === 'notice');
      expect(notice?.checkId).toBe('scanner-can-read-cluster');
      expect(notice?.message).toMatch(
        /^Admission in good is checked with the scanner's built-in rules, not the installed CRDs: the CRD ec2nodeclasses/
      );
      expect(notice?.remediation).toContain('resources: ["customresourcedefinitions"]');
      expect(notice?.remediation).toContain(
        'resourceNames: ["ec2nodeclasses.karpenter.k8s.aws", "nodepools.karpenter.sh"]'
      );
      expect(findings.filter((finding) => finding.status === 'pass')).toHaveLength(1);
    });
  });
});

describe("cluster-source: the node roles' access entries", () => {
  const arnOf = (role: string) => `arn:aws:iam::123456789012:role/${role}`;
  const entryOf = (principalArn: string) => ({
    accessEntry: { principalArn, type: 'EC2_LINUX', kubernetesGroups: [] },
  });
  /** A cluster whose NodeClasses have these specs (all in one page). */
  async function accessEntriesOf(
    specs: Record<string, unknown>[],
    extra: Partial<Parameters<typeof createClusterSource>[0]> = {}
  ) {
    eksMock.on(DescribeClusterCommand).resolves(describeResponse('good', server.endpoint));
    serveCluster({
      '/apis/karpenter.k8s.aws/v1/ec2nodeclasses': (_req, res) =>
        sendJson(res, 200, {
          items: specs.map((spec, index) => aNodeClassObject({ name: `nc-${index}`, spec })),
        }),
    });
    const loaded = await source(['good'], extra).load();
    const aws = loaded.clusters[0]?.aws;
    return aws?.status === 'ok' ? aws.value.accessEntries : aws;
  }

  it('describes each distinct node role by its ARN, and lists nothing', async () => {
    eksMock.on(DescribeAccessEntryCommand).callsFake((input) => entryOf(input.principalArn));
    const entries = await accessEntriesOf([
      { role: 'NodeA' },
      { role: 'NodeB' },
      { role: 'NodeA' },
    ]);
    expect(entries).toEqual({
      status: 'ok',
      value: [arnOf('NodeA'), arnOf('NodeB')].map((principalArn) => ({
        principalArn,
        type: 'EC2_LINUX',
        kubernetesGroups: [],
      })),
    });
    expect(eksMock.commandCalls(ListAccessEntriesCommand)).toHaveLength(0);
  });

  it('lists every entry when a role has none under its plain ARN (a path, or none at all)', async () => {
    const withPath = 'arn:aws:iam::123456789012:role/nodes/NodeB';
    // NodeB's entry is under its ARN with a path: its plain ARN has none.
    eksMock.on(DescribeAccessEntryCommand).callsFake((input) => {
      if (input.principalArn === arnOf('NodeB')) {
        throw new ResourceNotFoundException({ message: 'no entry', $metadata: {} });
      }
      return entryOf(input.principalArn);
    });
    eksMock
      .on(ListAccessEntriesCommand)
      .resolves({ accessEntries: [arnOf('NodeA'), withPath, arnOf('Admin')] });
    const entries = await accessEntriesOf([{ role: 'NodeA' }, { role: 'NodeB' }]);
    expect(entries?.status === 'ok' && entries.value.map((entry) => entry.principalArn)).toEqual([
      arnOf('NodeA'),
      withPath,
      arnOf('Admin'),
    ]);
    expect(eksMock.commandCalls(ListAccessEntriesCommand)).toHaveLength(1);
  });

  it("lists every entry when a NodeClass names an instance profile (its role is IAM's to tell)", async () => {
    eksMock.on(DescribeAccessEntryCommand).callsFake((input) => entryOf(input.principalArn));
    eksMock.on(ListAccessEntriesCommand).resolves({ accessEntries: [arnOf('ProfileRole')] });
    const entries = await accessEntriesOf([
      { role: 'NodeA' },
      { role: undefined, instanceProfile: 'nodes-profile' },
    ]);
    expect(entries?.status === 'ok' && entries.value.map((entry) => entry.principalArn)).toEqual([
      arnOf('ProfileRole'),
    ]);
    expect(
      eksMock
        .commandCalls(DescribeAccessEntryCommand)
        .map((call) => call.args[0].input.principalArn)
    ).toEqual([arnOf('ProfileRole')]);
  });

  it("describes an instance profile's role when the account directory knows it", async () => {
    eksMock.on(DescribeAccessEntryCommand).callsFake((input) => entryOf(input.principalArn));
    const profiles: Record<string, string> = { 'nodes-profile': 'ProfileRole' };
    const entries = await accessEntriesOf(
      [
        { role: 'NodeA' },
        {
          role: undefined,
          instanceProfile: 'arn:aws:iam::123456789012:instance-profile/nodes-profile',
        },
      ],
      { instanceProfileRole: async (profile) => profiles[profile] }
    );
    expect(entries?.status === 'ok' && entries.value.map((entry) => entry.principalArn)).toEqual([
      arnOf('NodeA'),
      arnOf('ProfileRole'),
    ]);
    expect(eksMock.commandCalls(ListAccessEntriesCommand)).toHaveLength(0);
  });

  it('reports a describe that fails as unreadable entries, not as none', async () => {
    eksMock
      .on(DescribeAccessEntryCommand)
      .rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }));
    const entries = await accessEntriesOf([{ role: 'NodeA' }]);
    expect(entries).toMatchObject({ status: 'unavailable', reason: 'access-denied' });
  });
});
