import { DescribeClusterCommand } from '@aws-sdk/client-eks';
import type { Log } from 'sarif';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EXIT_FINDINGS, EXIT_USAGE } from '../../lambda/cli/main.js';
import { formatClusterProgress } from '../../lambda/cli/plan.js';
import type { ScanReport } from '../../lambda/core/report.js';
import {
  generatePki,
  sendJson,
  startApiServer,
  statusBody,
  type TestApiServer,
} from '../adapters/kube/tls-fixtures.js';
import { aNodeClassObject } from '../support/builders.js';
import { ACCESS_DENIED, eksCluster, mockLiveAws } from '../support/live-aws-mocks.js';
import { runCliCaptured } from './support/run-cli.js';
import { sarifErrors } from './support/sarif-schema.js';

// The live plan's AWS-facts and permission enrichers also run: keep them off the network.
const aws = mockLiveAws();
const eksMock = aws.eks;
let server: TestApiServer;
let caPem: string;

const run = (argv: string[], stderrTty: boolean) => runCliCaptured(argv, { stderrTty });

beforeAll(async () => {
  const pki = generatePki();
  caPem = pki.caPem;
  server = await startApiServer(pki);
});

afterAll(async () => {
  await server.close();
  aws.restore();
});

beforeEach(() => {
  aws.reset();
  server.requests.length = 0;
  eksMock.on(DescribeClusterCommand).resolves(eksCluster('prod', server.endpoint, caPem));
  server.handle((_req, res, url) => {
    if (url.pathname === '/apis/karpenter.k8s.aws/v1/ec2nodeclasses') {
      sendJson(res, 200, {
        items: [
          aNodeClassObject({
            name: 'broken',
            status: {
              conditions: [{ type: 'Ready', status: 'False', reason: 'UnhealthyDependents' }],
            },
          }),
        ],
      });
    } else if (url.pathname.startsWith('/apis/apiextensions.k8s.io/')) {
      // No CRD objects served: admission falls back to the built-in rules, without a notice.
      sendJson(res, 404, statusBody(404, 'NotFound', 'no'));
    } else if (url.pathname.startsWith('/apis/')) sendJson(res, 200, { items: [] });
    else sendJson(res, 404, statusBody(404, 'NotFound', 'no'));
  });
});

describe('nodeclass-scan scan --cluster', () => {
  it('scans a live cluster through the EKS API and prints a progress line on a TTY', async () => {
    // Act
    const result = await run(
      [
        'scan',
        '--cluster',
        'prod',
        '--region',
        'eu-west-1',
        '--format',
        'json',
        '--only',
        'nodeclass-ready,scanner-can-read-cluster',
      ],
      true
    );

    // Assess
    expect(result.code).toBe(EXIT_FINDINGS);
    expect(result.stderr).toBe('[1/1] prod: 1 EC2NodeClass\n');
    const report = JSON.parse(result.stdout) as ScanReport;
    expect(
      report.findings.map((finding) => [finding.checkId, finding.resource.name, finding.status])
    ).toEqual([
      ['nodeclass-ready', 'broken', 'fail'],
      ['scanner-can-read-cluster', 'prod', 'pass'],
    ]);
    // Signed with the default credential chain (the test environment's keys).
    const token = server.requests[0]?.authorization?.slice('Bearer k8s-aws-v1.'.length) ?? '';
    const url = new URL(Buffer.from(token, 'base64url').toString('utf8'));
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(
      /^AKIAIOSFODNN7EXAMPLE\/\d{8}\/eu-west-1\/sts\/aws4_request$/
    );
    expect(eksMock.commandCalls(DescribeClusterCommand)[0]?.args[0].input).toEqual({
      name: 'prod',
    });
  });

  it('prints no progress with --quiet, even on a TTY', async () => {
    const result = await run(
      ['scan', '--cluster', 'prod', '--region', 'eu-west-1', '--quiet', '--format', 'json'],
      true
    );
    expect(result.code).toBe(EXIT_FINDINGS);
    expect(result.stderr).toBe('');
    expect((JSON.parse(result.stdout) as ScanReport).findings.length).toBeGreaterThan(0);
  });

  it('prints no progress when stderr is not a TTY', async () => {
    const result = await run(['scan', '--cluster', 'prod', '--region', 'eu-west-1'], false);
    expect(result.stderr).toBe('');
  });

  it('needs --region', async () => {
    const result = await run(['scan', '--cluster', 'prod'], false);
    expect(result.code).toBe(EXIT_USAGE);
    expect(result.stderr).toContain('--cluster needs --region');
  });

  it('refuses manifest paths together with --cluster', async () => {
    const result = await run(
      ['scan', 'x.yaml', '--cluster', 'prod', '--region', 'eu-west-1'],
      false
    );
    expect(result.code).toBe(EXIT_USAGE);
    expect(result.stderr).toContain('not both');
  });

  it('refuses a --controller-role for a cluster that is not scanned', async () => {
    const result = await run(
      [
        'scan',
        '--cluster',
        'prod',
        '--region',
        'eu-west-1',
        '--controller-role',
        'prdo=arn:aws:iam::111122223333:role/KarpenterController',
      ],
      false
    );
    expect(result.code).toBe(EXIT_USAGE);
    expect(result.stderr).toContain('--controller-role names prdo');
  });

  it('keeps a cluster the scanner may not read as a finding, not a usage error', async () => {
    // Prepare: authenticated, but RBAC forbids listing EC2NodeClasses.
    server.handle((_req, res) => {
      sendJson(res, 403, statusBody(403, 'Forbidden', 'ec2nodeclasses is forbidden'));
    });

    // Act
    const result = await run(
      ['scan', '--cluster', 'prod', '--region', 'eu-west-1', '--format', 'json'],
      false
    );

    // Assess
    expect(result.code).toBe(EXIT_FINDINGS);
    expect(result.stderr).toBe('');
    const report = JSON.parse(result.stdout) as ScanReport;
    expect(
      report.findings.find((finding) => finding.checkId === 'scanner-can-read-cluster')
    ).toMatchObject({ status: 'fail', resource: { cluster: 'prod', kind: 'Cluster' } });
  });

  it('keeps a cluster whose eks:DescribeCluster is denied as a finding', async () => {
    // Prepare
    eksMock.on(DescribeClusterCommand).rejects(ACCESS_DENIED);

    // Act
    const result = await run(
      ['scan', '--cluster', 'prod', '--region', 'eu-west-1', '--format', 'json'],
      false
    );

    // Assess
    expect(result.code).toBe(EXIT_FINDINGS);
    const report = JSON.parse(result.stdout) as ScanReport;
    const read = report.findings.find((finding) => finding.checkId === 'scanner-can-read-cluster');
    expect(read?.status).toBe('fail');
    expect(read?.message).toContain('may not describe cluster prod');
  });

  it('locates live findings in SARIF at stable pseudo-paths, cluster-level ones included', async () => {
    // Prepare
    server.handle((_req, res) => {
      sendJson(res, 403, statusBody(403, 'Forbidden', 'forbidden'));
    });

    // Act
    const result = await run(
      ['scan', '--cluster', 'prod', '--region', 'eu-west-1', '--format', 'sarif'],
      false
    );

    // Assess
    const log = JSON.parse(result.stdout) as Log;
    expect(sarifErrors(log)).toEqual([]);
    const read = log.runs[0]?.results?.find((entry) => entry.ruleId === 'scanner-can-read-cluster');
    expect(read?.locations?.[0]?.physicalLocation).toEqual({
      artifactLocation: { uri: 'clusters/prod/cluster.yaml' },
      region: { startLine: 1 },
    });
  });

  it('formats progress for clusters that could not be read', () => {
    expect(
      formatClusterProgress({
        cluster: 'down',
        index: 2,
        total: 3,
        outcome: 'unavailable',
        nodeClasses: 0,
        message: 'timed out',
      })
    ).toBe('[2/3] down: not read (timed out)\n');
  });
});
