// Timeouts and the scan deadline of the SDK clients the scanner builds, against a local endpoint
// that accepts connections and never answers.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DescribeImagesCommand, type EC2Client } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyAwsError } from '../../../lambda/adapters/aws/aws-errors.js';
import { createAwsClients } from '../../../lambda/adapters/aws/clients.js';
import { deadlineAfter, withScanDeadline } from '../../../lambda/shared/deadline.js';

let server: Server;
let requests = 0;
let endpoint = '';
const saved = process.env.AWS_ENDPOINT_URL_EC2;

beforeAll(async () => {
  server = createServer(() => {
    requests += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.env.AWS_ENDPOINT_URL_EC2 = endpoint;
});

afterAll(async () => {
  if (saved === undefined) delete process.env.AWS_ENDPOINT_URL_EC2;
  else process.env.AWS_ENDPOINT_URL_EC2 = saved;
  await new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
});

function ec2(requestTimeoutMs: number): EC2Client {
  return createAwsClients({
    region: 'us-east-1',
    maxAttempts: 2,
    timeouts: { connectionTimeoutMs: 1_000, requestTimeoutMs },
  }).ec2();
}

const credentials = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'test' };

async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error
  );
}

describe('AWS client timeouts', () => {
  it('ends an unanswered request at the request timeout, retried, as a timeout', async () => {
    // Prepare
    requests = 0;
    const client = ec2(300);
    client.config.credentials = async () => credentials;
    const started = Date.now();

    // Act
    const error = await errorOf(client.send(new DescribeImagesCommand({})));

    // Assess: two attempts of 300 ms, then the SDK's error, classified
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(requests).toBe(2);
    expect((error as Error).name).toBe('TimeoutError');
    expect(classifyAwsError(error)).toBe('timeout');
  });

  it('abandons a call at the scan deadline, long before its request timeout', async () => {
    // Prepare
    const client = ec2(60_000);
    client.config.credentials = async () => credentials;
    const deadline = deadlineAfter(300, 'the scan deadline of 300 ms (test)');
    const started = Date.now();

    // Act
    const error = await errorOf(
      withScanDeadline(deadline, () => client.send(new DescribeImagesCommand({})))
    );

    // Assess
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((error as Error).message).toBe(
      'ec2:DescribeImages was abandoned at the scan deadline of 300 ms (test)'
    );
    expect(classifyAwsError(error)).toBe('timeout');
  });

  it('refuses a call started after the deadline without sending it', async () => {
    // Prepare
    requests = 0;
    const client = ec2(60_000);
    client.config.credentials = async () => credentials;
    const passed = deadlineAfter(-1, 'the scan deadline (passed)');

    // Act
    const error = await errorOf(
      withScanDeadline(passed, () => client.send(new DescribeImagesCommand({})))
    );

    // Assess
    expect(classifyAwsError(error)).toBe('timeout');
    expect(requests).toBe(0);
  });

  it('leaves calls outside a scan with a deadline alone', async () => {
    // Prepare: no deadline in scope, a short request timeout ends the call
    const client = ec2(200);
    client.config.credentials = async () => credentials;

    // Act
    const error = await errorOf(client.send(new DescribeImagesCommand({})));

    // Assess
    expect((error as Error).name).toBe('TimeoutError');
  });
});
