// NodePools read live through the EKS API: the NodePool checks see the cluster's own NodeClasses,
// and a NodePool the API server would keep but Karpenter cannot use is reported on the NodePool.
import { DescribeClusterCommand } from '@aws-sdk/client-eks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EXIT_FINDINGS } from '../../lambda/cli/main.js';
import type { ScanReport } from '../../lambda/core/report.js';
import {
  generatePki,
  sendJson,
  startApiServer,
  statusBody,
  type TestApiServer,
} from '../adapters/kube/tls-fixtures.js';
import { aNodeClassObject } from '../support/builders.js';
import { eksCluster, mockLiveAws } from '../support/live-aws-mocks.js';
import { aNodePoolObject } from '../support/nodepool-builders.js';
import { runCliCaptured } from './support/run-cli.js';

const aws = mockLiveAws();
let server: TestApiServer;
let caPem: string;

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
  aws.eks.on(DescribeClusterCommand).resolves(eksCluster('prod', server.endpoint, caPem));
  const arm64Only = [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }];
  server.handle((_req, res, url) => {
    if (url.pathname === '/apis/karpenter.k8s.aws/v1/ec2nodeclasses') {
      sendJson(res, 200, { items: [aNodeClassObject({ name: 'default' })] });
    } else if (url.pathname === '/apis/karpenter.sh/v1/nodepools') {
      sendJson(res, 200, {
        items: [
          aNodePoolObject({ name: 'general', nodeClass: 'default', requirements: arm64Only }),
          aNodePoolObject({ name: 'gpu', nodeClass: 'gpu-class' }),
          aNodePoolObject({
            name: 'restricted-key',
            nodeClass: 'default',
            requirements: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['x'] }],
          }),
        ],
      });
    } else if (url.pathname.startsWith('/apis/')) sendJson(res, 200, { items: [] });
    else sendJson(res, 404, statusBody(404, 'NotFound', 'no'));
  });
});

describe('nodeclass-scan scan --cluster with NodePools', () => {
  it('reports NodePool findings against the live cluster, each on its NodePool', async () => {
    // Act
    const result = await runCliCaptured([
      'scan',
      '--cluster',
      'prod',
      '--region',
      'eu-west-1',
      '--format',
      'json',
      '--only',
      'nodepool-nodeclass-exists,nodepool-schema-valid',
    ]);

    // Assess
    expect(result.code).toBe(EXIT_FINDINGS);
    const report = JSON.parse(result.stdout) as ScanReport;
    const byPool = (name: string, checkId: string) =>
      report.findings.filter(
        (finding) =>
          finding.resource.kind === 'NodePool' &&
          finding.resource.name === name &&
          finding.checkId === checkId
      );
    const missing = byPool('gpu', 'nodepool-nodeclass-exists');
    expect(missing.map((finding) => finding.status)).toEqual(['fail']);
    expect(missing[0]?.resource.cluster).toBe('prod');
    expect(missing[0]?.message).toContain('gpu-class');
    expect(missing[0]?.message).toContain('prod');
    expect(byPool('general', 'nodepool-nodeclass-exists').map((f) => f.status)).toEqual(['pass']);
    const restricted = byPool('restricted-key', 'nodepool-schema-valid');
    expect(restricted.some((finding) => finding.status === 'fail')).toBe(true);
    expect(byPool('general', 'nodepool-schema-valid').map((f) => f.status)).toEqual(['pass']);
  });
});
