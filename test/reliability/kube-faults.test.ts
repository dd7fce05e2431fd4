// A cluster endpoint that hangs (a real local HTTPS server that never answers): the scan of every
// cluster still completes through scanAndPublish; the hung cluster reports `error` (timeout), its
// stored findings stay open, and the healthy cluster's state is untouched.
import {
  DescribeClusterCommand,
  EKSClient,
  ListAccessEntriesCommand,
  ListPodIdentityAssociationsCommand,
} from '@aws-sdk/client-eks';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEksReader } from '../../lambda/adapters/aws/eks-reader.js';
import { createClusterSource } from '../../lambda/adapters/kube/cluster-source.js';
import { type ScanAndPublishDeps, scanAndPublish } from '../../lambda/app/scan-and-publish.js';
import {
  generatePki,
  sendJson,
  startApiServer,
  statusBody,
  type TestApiServer,
  type TestPki,
} from '../adapters/kube/tls-fixtures.js';
import { aNodeClassObject } from '../support/builders.js';
import { provisionedEksCluster } from '../support/live-aws-mocks.js';
import {
  InMemoryFindingStore,
  RecordingMetrics,
  RecordingPublisher,
  silentLogger,
} from '../support/service-fakes.js';

const eksMock = mockClient(EKSClient);
const START = new Date('2026-11-01T12:00:00Z');

let pki: TestPki;
const servers: Record<string, TestApiServer> = {};

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
        containers: [{ name: 'controller', image: 'public.ecr.aws/karpenter/controller:1.8.0' }],
      },
    },
  },
};

function serveHealthy(server: TestApiServer): void {
  const nodeClasses = [
    aNodeClassObject({ name: 'good' }),
    // Fails imds-v2-required: a finding that must survive the outage.
    aNodeClassObject({
      name: 'imdsv1',
      spec: {
        metadataOptions: {
          httpEndpoint: 'enabled',
          httpProtocolIPv6: 'disabled',
          httpPutResponseHopLimit: 1,
          httpTokens: 'optional',
        },
      },
    }),
  ];
  server.handle((_req, res, url) => {
    if (url.pathname === '/apis/karpenter.k8s.aws/v1/ec2nodeclasses') {
      sendJson(res, 200, { items: nodeClasses });
    } else if (url.pathname === '/apis/karpenter.sh/v1/nodepools') {
      sendJson(res, 200, { items: [] });
    } else if (url.pathname === '/apis/apps/v1/deployments') {
      sendJson(res, 200, { items: [KARPENTER_DEPLOYMENT] });
    } else if (url.pathname === '/api/v1/namespaces/karpenter/serviceaccounts/karpenter') {
      sendJson(res, 200, {
        metadata: {
          name: 'karpenter',
          annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/kc' },
        },
      });
    } else {
      sendJson(res, 404, statusBody(404, 'NotFound', `${url.pathname} not found`));
    }
  });
}

function hang(server: TestApiServer): void {
  server.handle(() => {
    // never answers
  });
}

function depsFor(store: InMemoryFindingStore, publisher: RecordingPublisher, at: Date) {
  const deps: ScanAndPublishDeps = {
    planFor: ({ cluster }) => ({
      objects: createClusterSource({
        region: 'eu-west-1',
        clusters: [cluster],
        eks: createEksReader({ eks: new EKSClient({ region: 'eu-west-1' }) }),
        tokens: { token: async () => 'k8s-aws-v1.test' },
        readTimeoutMs: 300,
        connectTimeoutMs: 2_000,
      }),
    }),
    store,
    publisher,
    metrics: new RecordingMetrics(),
    logger: silentLogger,
    clock: () => at,
    settings: { reminderIntervalMs: 24 * 60 * 60 * 1000, digest: 'never' },
  };
  return deps;
}

beforeAll(async () => {
  pki = generatePki();
  servers.alpha = await startApiServer(pki);
  servers.beta = await startApiServer(pki);
  eksMock.on(ListAccessEntriesCommand).resolves({ accessEntries: [] });
  eksMock.on(ListPodIdentityAssociationsCommand).resolves({ associations: [] });
  for (const name of ['alpha', 'beta']) {
    eksMock
      .on(DescribeClusterCommand, { name })
      .resolves(provisionedEksCluster(name, servers[name]?.endpoint ?? '', pki.caPem, 'eu-west-1'));
  }
});

afterAll(async () => {
  eksMock.restore();
  await Promise.all(Object.values(servers).map((server) => server.close()));
});

describe('a cluster endpoint that hangs', () => {
  it('errors that cluster with a timeout, alerts nothing and leaves every stored finding in place', async () => {
    // Prepare: a baseline scan of two healthy clusters
    const store = new InMemoryFindingStore();
    const request = {
      scanId: 's',
      trigger: 'schedule',
      clusters: [{ cluster: 'alpha' }, { cluster: 'beta' }],
    };
    serveHealthy(servers.alpha as TestApiServer);
    serveHealthy(servers.beta as TestApiServer);
    const first = await scanAndPublish(depsFor(store, new RecordingPublisher(), START), request);
    expect(first.failedClusters).toEqual([]);
    const before = structuredClone([...store.findings.values()]);
    expect(before.filter((state) => state.findingStatus === 'error')).toEqual([]);
    const openBefore = before.filter((state) => state.status === 'open');
    expect(openBefore.some((state) => state.resource.cluster === 'beta')).toBe(true);
    hang(servers.beta as TestApiServer);
    const publisher = new RecordingPublisher();
    const deps = depsFor(store, publisher, new Date(START.getTime() + 60_000));

    // Act
    const second = await scanAndPublish(deps, request);

    // Assess: both clusters were scanned; beta's read fault is counted as a source error (its
    // alarm pages when it persists), and alerts nothing: a fault is not a verdict
    expect(second.outcomes.map((outcome) => [outcome.cluster, outcome.ok])).toEqual([
      ['alpha', true],
      ['beta', true],
    ]);
    expect(publisher.sent).toEqual([]);
    const sourceErrors = (deps.metrics as RecordingMetrics).records.filter(
      (record) => record.name === 'SourceErrors' && record.value > 0
    );
    expect(sourceErrors.map((record) => record.dimensions.Cluster)).toContain('beta');
    expect(
      [...store.findings.values()].some(
        (state) => state.checkId === 'scanner-can-read-cluster' && state.resource.cluster === 'beta'
      )
    ).toBe(false);
    // nothing that was open is resolved or altered: the outage is not a fix
    for (const state of openBefore) expect(store.stateOf(state.id)).toEqual(state);
  });
});
