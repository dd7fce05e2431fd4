import { DescribeImagesCommand } from '@aws-sdk/client-ec2';
import { GetParameterCommand } from '@aws-sdk/client-ssm';
import { HttpResponse } from '@smithy/protocol-http';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAwsClients } from '../../../lambda/adapters/aws/clients.js';
import { createEc2Reader } from '../../../lambda/adapters/aws/ec2-reader.js';
import { ApiRateLimiter, rateLimited } from '../../../lambda/adapters/aws/rate-limit.js';

/** Records what each token was taken for; never waits. */
class RecordingLimiter extends ApiRateLimiter {
  public readonly taken: string[] = [];
  public constructor() {
    super({ limits: {}, now: () => 0, sleep: async () => {} });
  }
  public override take(service: string, operation: string): Promise<void> {
    this.taken.push(`${service}:${operation}`);
    return Promise.resolve();
  }
}

// A fake HTTP layer under the real SDK middleware stack (signing, retries, our counter).
function fakeHttp(responses: readonly { status: number; body: string }[]) {
  let index = 0;
  const requests: unknown[] = [];
  return {
    requests,
    handler: {
      handle: async (request: unknown) => {
        requests.push(request);
        const next = responses[Math.min(index, responses.length - 1)];
        index += 1;
        return {
          response: new HttpResponse({
            statusCode: next?.status ?? 500,
            headers: { 'content-type': 'text/xml' },
            body: Buffer.from(next?.body ?? ''),
          }),
        };
      },
    },
  };
}

const THROTTLED = {
  status: 503,
  body: '<Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>Request limit exceeded.</Message></Error></Errors><RequestID>r1</RequestID></Response>',
};
const NO_IMAGES = {
  status: 200,
  body: '<DescribeImagesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r2</requestId><imagesSet/></DescribeImagesResponse>',
};

async function settle<T>(promise: Promise<T>): Promise<PromiseSettledResult<T>> {
  let done = false;
  const settled = Promise.allSettled([promise]).finally(() => {
    done = true;
  });
  // Standard retry sleeps between attempts; fast-forward them until the call settles. Between
  // turns, yield to I/O (setImmediate is not faked): on a loaded machine the credential chain's
  // file reads can finish after any fixed number of turns, and the backoff it then schedules
  // would never be advanced.
  const giveUpAt = Date.now() + 20_000;
  while (!done && Date.now() < giveUpAt) {
    await vi.advanceTimersByTimeAsync(30_000);
    await new Promise((resolve) => setImmediate(resolve));
  }
  const [result] = await settled;
  return result as PromiseSettledResult<T>;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('AWS clients', () => {
  it('creates one client per service and region, lazily', () => {
    // Prepare
    const clients = createAwsClients({ region: 'us-east-1' });

    // Act
    const first = clients.ec2();
    const again = clients.ec2('us-east-1');
    const other = clients.ec2('eu-west-1');

    // Assess
    expect(again).toBe(first);
    expect(other).not.toBe(first);
    expect(clients.counter.totalCalls()).toBe(0);
  });

  it('counts each command once and each retry attempt separately', async () => {
    // Prepare
    const http = fakeHttp([THROTTLED, THROTTLED, NO_IMAGES]);
    const clients = createAwsClients({ region: 'us-east-1', requestHandler: http.handler });

    // Act
    const result = await settle(
      clients.ec2().send(new DescribeImagesCommand({ Owners: ['self'], MaxResults: 1000 }))
    );

    // Assess
    expect(result.status).toBe('fulfilled');
    expect(http.requests).toHaveLength(3);
    expect(clients.counter.counts()).toEqual({
      calls: { 'ec2:DescribeImages': 1 },
      attempts: { 'ec2:DescribeImages': 3 },
    });
  });

  it('gives up after maxAttempts and the reader reports the throttling as a source error', async () => {
    // Prepare
    const http = fakeHttp([THROTTLED]);
    const clients = createAwsClients({
      region: 'us-east-1',
      maxAttempts: 4,
      requestHandler: http.handler,
    });
    const reader = createEc2Reader(clients.ec2());

    // Act
    const result = await settle(
      reader.describeImages({
        filters: [{ name: 'image-id', values: ['ami-1'] }],
        includeDeprecated: true,
      })
    );

    // Assess
    expect(result.status).toBe('rejected');
    expect((result as PromiseRejectedResult).reason).toMatchObject({
      name: 'SourceUnavailableError',
      source: 'ec2:DescribeImages',
      reason: 'throttled',
    });
    expect(http.requests).toHaveLength(4);
    expect(clients.counter.counts().attempts).toEqual({ 'ec2:DescribeImages': 4 });
  });

  it('names the service in the count key', async () => {
    // Prepare
    const http = fakeHttp([
      {
        status: 200,
        body: JSON.stringify({ Parameter: { Name: '/p', Value: 'ami-1', Type: 'String' } }),
      },
    ]);
    const clients = createAwsClients({ region: 'us-east-1', requestHandler: http.handler });

    // Act
    await settle(clients.ssm().send(new GetParameterCommand({ Name: '/p' })));

    // Assess
    expect(clients.counter.counts().calls).toEqual({ 'ssm:GetParameter': 1 });
  });

  it('takes one rate-limit token per command, keyed by the middleware context command name, and the SDK alone retries', async () => {
    // Prepare: a class renamed as a minifier would; the key must not come from it.
    const http = fakeHttp([THROTTLED]);
    const limiter = new RecordingLimiter();
    const clients = createAwsClients({
      region: 'us-east-1',
      maxAttempts: 3,
      requestHandler: http.handler,
      limiter,
    });
    const Renamed = class extends DescribeImagesCommand {};
    Object.defineProperty(Renamed, 'name', { value: 'a' });

    // Act: also wrapped again, as adapters given the limiter do.
    const ec2 = rateLimited(clients.ec2(), 'ec2', limiter);
    const result = await settle(ec2.send(new Renamed({ Owners: ['self'] })));

    // Assess
    expect(result.status).toBe('rejected');
    expect(limiter.taken).toEqual(['ec2:DescribeImages']);
    expect(http.requests).toHaveLength(3);
  });
});
