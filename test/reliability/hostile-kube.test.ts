// Hostile Kubernetes API servers (real local HTTPS servers with a CA made in the test): a server
// that drips bytes, pages forever or echoes the Authorization header costs its own cluster a
// classified `error` finding and nothing else. The other cluster's findings are still reported,
// and the bearer token never reaches the report, the progress line or an SNS message.
import type { ServerResponse } from 'node:http';
import { DescribeClusterCommand, EKSClient } from '@aws-sdk/client-eks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEksReader } from '../../lambda/adapters/aws/eks-reader.js';
import { createClusterSource } from '../../lambda/adapters/kube/cluster-source.js';
import type { KubeLimits } from '../../lambda/adapters/kube/kube-client.js';
import { runScan } from '../../lambda/app/run-scan.js';
import { EXIT_FINDINGS } from '../../lambda/cli/main.js';
import type { Finding } from '../../lambda/core/model.js';
import { renderChangeMessage } from '../../lambda/core/notify/message.js';
import type { ScanReport } from '../../lambda/core/report.js';
import {
  generatePki,
  sendJson,
  startApiServer,
  statusBody,
  type TestApiServer,
  type TestPki,
} from '../adapters/kube/tls-fixtures.js';
import { runCliCaptured, SCAN_TIME } from '../cli/support/run-cli.js';
import { aNodeClassObject } from '../support/builders.js';
import { aStoredState } from '../support/findings.js';
import { mockLiveAws, provisionedEksCluster } from '../support/live-aws-mocks.js';

const REGION = 'eu-west-1';
const NODECLASSES = '/apis/karpenter.k8s.aws/v1/ec2nodeclasses';
// The CLI's live plan also runs the AWS-facts and permission enrichers: keep them off the network.
const aws = mockLiveAws({
  Account: '123456789012',
  Arn: 'arn:aws:iam::123456789012:user/scanner',
  UserId: 'AIDAEXAMPLE',
});

let pki: TestPki;
const servers = new Map<string, TestApiServer>();

function serverOf(cluster: string): TestApiServer {
  const server = servers.get(cluster);
  if (!server) throw new Error(`no server for ${cluster}`);
  return server;
}

/** A well-behaved cluster with one NodeClass that fails imds-v2-required. */
function serveCalm(server: TestApiServer): void {
  server.handle((_req, res, url) => {
    if (url.pathname === NODECLASSES) {
      sendJson(res, 200, {
        items: [
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
        ],
      });
    } else if (url.pathname.startsWith('/apis/') && !url.pathname.includes('/apiextensions.')) {
      sendJson(res, 200, { items: [] });
    } else sendJson(res, 404, statusBody(404, 'NotFound', `${url.pathname} not found`));
  });
}

/** A list page that always names a next one, padded to about `bytes`. */
function endlessPage(res: ServerResponse, url: URL, bytes: number): void {
  const page = Number(url.searchParams.get('continue') ?? '0') + 1;
  sendJson(res, 200, {
    metadata: { continue: String(page) },
    items: [
      aNodeClassObject({ name: `n${page}`, metadata: { labels: { pad: 'x'.repeat(bytes) } } }),
    ],
  });
}

function drip(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const timer = setInterval(() => res.write(' '), 200);
  res.on('close', () => clearInterval(timer));
}

const LIMITS: Partial<KubeLimits> = {
  requestDeadlineMs: 1_000,
  listDeadlineMs: 3_000,
  maxListBytes: 1024 * 1024,
  maxListPages: 20,
};

const HOSTILE: readonly {
  name: string;
  serve: (res: ServerResponse, url: URL) => void;
  limit: keyof KubeLimits;
}[] = [
  { name: 'drips one byte every 200 ms', serve: (res) => drip(res), limit: 'requestDeadlineMs' },
  {
    name: 'pages forever, slowly',
    serve: (res, url) => setTimeout(() => endlessPage(res, url, 10), 250),
    limit: 'listDeadlineMs',
  },
  {
    name: 'pages forever with large bodies',
    serve: (res, url) => endlessPage(res, url, 256 * 1024),
    limit: 'maxListBytes',
  },
  { name: 'pages forever', serve: (res, url) => endlessPage(res, url, 10), limit: 'maxListPages' },
];

function describeClusters(names: readonly string[]): void {
  for (const name of names) {
    aws.eks
      .on(DescribeClusterCommand, { name })
      .resolves(provisionedEksCluster(name, serverOf(name).endpoint, pki.caPem, REGION));
  }
}

function findingsOf(report: ScanReport, cluster: string): Finding[] {
  return report.findings.filter((finding) => finding.resource.cluster === cluster);
}

beforeAll(async () => {
  pki = generatePki();
  for (const name of ['calm', 'hostile', 'echo401', 'echo500']) {
    servers.set(name, await startApiServer(pki));
  }
});

afterAll(async () => {
  aws.restore();
  await Promise.all([...servers.values()].map((server) => server.close()));
});

beforeEach(() => {
  aws.reset();
  describeClusters([...servers.keys()]);
  for (const server of servers.values()) server.requests.length = 0;
  serveCalm(serverOf('calm'));
});

describe('a cluster whose API server is hostile', () => {
  it.each(HOSTILE)(
    'that $name gets an error naming $limit; the other cluster is still reported',
    async ({ serve, limit }) => {
      // Prepare
      serverOf('hostile').handle((_req, res, url) => serve(res, url));
      const plan = {
        objects: createClusterSource({
          region: REGION,
          clusters: ['calm', 'hostile'],
          eks: createEksReader({ eks: new EKSClient({ region: REGION }) }),
          tokens: { token: async () => 'k8s-aws-v1.test' },
          kubeLimits: LIMITS,
        }),
      };

      // Act
      const report = await runScan(plan, {
        now: SCAN_TIME,
        only: ['scanner-can-read-cluster', 'imds-v2-required'],
      });

      // Assess
      const hostile = findingsOf(report, 'hostile');
      expect(hostile.map((finding) => [finding.checkId, finding.status])).toEqual([
        ['scanner-can-read-cluster', 'error'],
      ]);
      expect(hostile[0]?.message).toContain(`kube limit ${limit}`);
      const calm = findingsOf(report, 'calm').map((finding) =>
        [finding.checkId, finding.resource.name, finding.status].join(' ')
      );
      expect(calm.sort()).toEqual([
        'imds-v2-required imdsv1 fail',
        'scanner-can-read-cluster calm pass',
      ]);
      expect(report.summary.clusters).toEqual(['calm', 'hostile']);
    },
    20_000
  );
});

describe('a server that echoes the Authorization header', () => {
  it('leaks the token into neither the CLI report, the progress line nor SNS messages', async () => {
    // Prepare: one cluster answers 401, the other 500, each quoting the header back
    for (const [name, status] of [
      ['echo401', 401],
      ['echo500', 500],
    ] as const) {
      serverOf(name).handle((req, res) =>
        sendJson(
          res,
          status,
          statusBody(status, 'Failure', `rejected Authorization: ${req.headers.authorization}`)
        )
      );
    }

    // Act
    const result = await runCliCaptured(
      [
        'scan',
        '--cluster',
        'calm',
        '--cluster',
        'echo401',
        '--cluster',
        'echo500',
        '--region',
        REGION,
        '--format',
        'json',
        '--only',
        'scanner-can-read-cluster,imds-v2-required',
      ],
      { stderrTty: true }
    );

    // Assess: the servers did receive (and echo) a real EKS token
    for (const name of ['echo401', 'echo500']) {
      expect(serverOf(name).requests[0]?.authorization).toMatch(/^Bearer k8s-aws-v1\.\S{100,}$/);
    }
    expect(result.code).toBe(EXIT_FINDINGS);
    expect(result.stdout).not.toContain('k8s-aws-v1.');
    expect(result.stderr).not.toContain('k8s-aws-v1.');
    expect(result.stderr).toContain('echo401: not read (');
    expect(result.stderr).toContain('Authorization: Bearer [redacted]');
    const report = JSON.parse(result.stdout) as ScanReport;
    const reads = report.findings.filter(
      (finding) => finding.checkId === 'scanner-can-read-cluster'
    );
    expect(reads.map((finding) => [finding.resource.cluster, finding.status])).toEqual(
      expect.arrayContaining([
        ['calm', 'pass'],
        ['echo401', 'fail'],
        ['echo500', 'error'],
      ])
    );
    expect(findingsOf(report, 'calm').some((f) => f.checkId === 'imds-v2-required')).toBe(true);
    for (const finding of reads.filter((read) => read.status !== 'pass')) {
      expect(JSON.stringify(finding.evidence)).toContain('Bearer [redacted]');
      const message = renderChangeMessage({
        kind: 'new',
        next: aStoredState(finding, SCAN_TIME.toISOString()),
        finding,
      });
      expect(JSON.stringify(message)).not.toContain('k8s-aws-v1.');
      expect(message.bodies.email).toContain('[redacted]');
    }
  }, 20_000);
});
