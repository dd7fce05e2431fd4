// An AWS endpoint that accepts connections and never answers, behind the real CLI and real SDK
// clients: the scan ends at its deadline, the checks fed by the hanging call report `error`, and
// the others their usual verdicts.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { IAMClient } from '@aws-sdk/client-iam';
import { SSMClient } from '@aws-sdk/client-ssm';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScanReport } from '../../lambda/core/report.js';
import { EDGE_MANIFEST } from '../cli/support/edge-manifest.js';
import { runCliCaptured, tempTree } from '../cli/support/run-cli.js';

const sts = mockClient(STSClient);
const iam = mockClient(IAMClient);
const ssm = mockClient(SSMClient);

/** EC2 on 127.0.0.1: DescribeImages is accepted and never answered; other actions find nothing. */
let ec2: Server;
const actions: string[] = [];
const saved: Record<string, string | undefined> = {};
const ENV = {
  AWS_ENDPOINT_URL_EC2: '',
  AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
  AWS_SECRET_ACCESS_KEY: 'test-secret',
};

beforeAll(async () => {
  ec2 = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    req.on('end', () => {
      const action = new URLSearchParams(body).get('Action') ?? 'Unknown';
      actions.push(action);
      if (action === 'DescribeImages') return;
      res
        .writeHead(200, { 'content-type': 'text/xml' })
        .end(
          `<${action}Response xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r-1</requestId></${action}Response>`
        );
    });
  });
  await new Promise<void>((resolve) => ec2.listen(0, '127.0.0.1', resolve));
  ENV.AWS_ENDPOINT_URL_EC2 = `http://127.0.0.1:${(ec2.address() as AddressInfo).port}`;
  for (const [name, value] of Object.entries(ENV)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
  sts.on(GetCallerIdentityCommand).resolves({
    Account: '111122223333',
    Arn: 'arn:aws:sts::111122223333:assumed-role/Auditor/session',
  });
  iam.onAnyCommand().resolves({});
  ssm.onAnyCommand().resolves({ Parameters: [], InvalidParameters: [] });
});

afterAll(async () => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  sts.restore();
  iam.restore();
  ssm.restore();
  await new Promise<void>((resolve) => {
    ec2.closeAllConnections();
    ec2.close(() => resolve());
  });
});

describe('scan --aws with an EC2 endpoint that never answers DescribeImages', () => {
  it('reports within its deadline: error where images were needed, verdicts elsewhere', async () => {
    // Prepare
    const tree = tempTree({ 'edge.yaml': EDGE_MANIFEST });
    const started = Date.now();

    // Act
    let run: Awaited<ReturnType<typeof runCliCaptured>>;
    try {
      run = await runCliCaptured(
        ['scan', '--aws', '--region', 'us-east-1', '--format', 'json', join(tree.dir, 'edge.yaml')],
        { env: { NODECLASS_SCAN_DEADLINE_MS: '2000' } }
      );
    } finally {
      tree.cleanup();
    }

    // Assess: the report came out shortly after the 2 s deadline, not after the SDK's retries
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(actions).toContain('DescribeImages');
    expect(actions).toContain('DescribeSubnets');
    const report = JSON.parse(run.stdout) as ScanReport;
    const statusOf = (checkId: string) =>
      report.findings.find((finding) => finding.checkId === checkId);
    const images = statusOf('ami-selector-resolves');
    expect(images?.status).toBe('error');
    expect(images?.message).toContain('scan deadline of 2000 ms (NODECLASS_SCAN_DEADLINE_MS)');
    // Subnets were answered (none match): a verdict, not an error
    expect(statusOf('subnets-resolve')?.status).toBe('fail');
  }, 15_000);
});
