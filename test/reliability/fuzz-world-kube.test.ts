// Fuzzing beyond manifests: mutated world files through the real CLI, and random Kubernetes API
// responses through the live cluster source. Each must end with a well-formed report (or, for a
// world file, one clear input error and exit 2); a broken cluster never costs another its findings.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DescribeClusterCommand, EKSClient } from '@aws-sdk/client-eks';
import { mockClient } from 'aws-sdk-client-mock';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEksReader } from '../../lambda/adapters/aws/eks-reader.js';
import { createClusterSource } from '../../lambda/adapters/kube/cluster-source.js';
import { runScan } from '../../lambda/app/run-scan.js';
import type { ScanReport } from '../../lambda/core/report.js';
import {
  generatePki,
  sendJson,
  startApiServer,
  type TestApiServer,
  type TestPki,
} from '../adapters/kube/tls-fixtures.js';
import { ReportContract } from '../cli/support/report-contract.js';
import { runCliCaptured, SCAN_TIME, tempTree } from '../cli/support/run-cli.js';
import { aNodeClassObject } from '../support/builders.js';
import { provisionedEksCluster } from '../support/live-aws-mocks.js';
import { propertyRuns } from '../support/property-runs.js';
import { reportProblems } from './support.js';

const WORLD_TEXT = readFileSync(
  join(import.meta.dirname, '..', '..', 'examples', 'world.json'),
  'utf8'
);

const oddValue = fc.oneof(
  { arbitrary: fc.anything({ maxDepth: 2 }), weight: 5 },
  {
    arbitrary: fc.constantFrom(
      '',
      '*',
      '?*',
      'ami-',
      '__proto__',
      'k8s-aws-v1.aGVsbG8',
      '\u001b[2J',
      -1,
      1e308,
      null,
      [],
      {}
    ),
    weight: 3,
  },
  { arbitrary: fc.string({ minLength: 2_000, maxLength: 5_000 }), weight: 1 }
);

/** Every path (keys and array indexes) of a JSON value, parents before children. */
function pathsOf(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== 'object') return [prefix];
  const children = Array.isArray(value)
    ? value.map((item, index) => pathsOf(item, [...prefix, index]))
    : Object.entries(value).map(([key, item]) => pathsOf(item, [...prefix, key]));
  return [prefix, ...children.flat()];
}

type Mutation =
  | { readonly op: 'replace'; readonly at: number; readonly value: unknown }
  | { readonly op: 'delete'; readonly at: number }
  | { readonly op: 'add'; readonly at: number; readonly key: string; readonly value: unknown };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('replace' as const), at: fc.nat(), value: oddValue }),
  fc.record({ op: fc.constant('delete' as const), at: fc.nat() }),
  fc.record({
    op: fc.constant('add' as const),
    at: fc.nat(),
    key: fc.constantFrom('__proto__', 'constructor', 'toString', 'extra', ''),
    value: oddValue,
  })
);

/** Applies mutations to a fresh copy of the example world, addressing paths by index. */
function mutatedWorld(mutations: readonly Mutation[]): string {
  const world = JSON.parse(WORLD_TEXT) as Record<string, unknown>;
  for (const change of mutations) {
    const paths = pathsOf(world).filter((path) => path.length > 0);
    const path = paths[change.at % paths.length] ?? [];
    const parent = path
      .slice(0, -1)
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], world) as Record<
      string | number,
      unknown
    >;
    const key = path[path.length - 1] ?? '';
    if (change.op === 'replace') parent[key] = change.value;
    else if (change.op === 'delete') {
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key];
    } else {
      const target = parent[key];
      if (target !== null && typeof target === 'object' && !Array.isArray(target)) {
        // defineProperty: a plain assignment to `__proto__` would set the prototype instead.
        Object.defineProperty(target, change.key, {
          value: change.value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
    }
  }
  return JSON.stringify(world);
}

describe('world-file fuzzing', () => {
  const { dir, cleanup } = tempTree({});
  afterAll(cleanup);

  it('never crashes: exit 0/1 with a well-formed report, or exit 2 with one clear error', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 6 }), async (mutations) => {
        const file = join(dir, 'world.json');
        writeFileSync(file, mutatedWorld(mutations));
        const run = await runCliCaptured(['scan', '--world', file, '--format', 'json']);
        expect([0, 1, 2]).toContain(run.code);
        expect(run.stderr).not.toContain('internal error');
        if (run.code === 2 && run.stdout === '') {
          // A world file that is not one: a single line naming the file.
          expect(run.stderr.trim().split('\n')).toHaveLength(1);
          expect(run.stderr).toContain(file);
          return;
        }
        const report = ReportContract.parse(JSON.parse(run.stdout)) as ScanReport;
        expect(reportProblems(report)).toEqual([]);
      }),
      { numRuns: propertyRuns(40) }
    );
    // Bounded by numRuns; the generous timeout only absorbs a loaded CI machine.
  }, 180_000);
});

describe('Kubernetes API response fuzzing', () => {
  const REGION = 'eu-west-1';
  const NODECLASSES = '/apis/karpenter.k8s.aws/v1/ec2nodeclasses';
  const eksMock = mockClient(EKSClient);
  let pki: TestPki;
  const servers: Record<'calm' | 'fuzzed', TestApiServer> = {} as never;

  beforeAll(async () => {
    pki = generatePki();
    servers.calm = await startApiServer(pki);
    servers.fuzzed = await startApiServer(pki);
    for (const [name, server] of Object.entries(servers)) {
      eksMock
        .on(DescribeClusterCommand, { name })
        .resolves(provisionedEksCluster(name, server.endpoint, pki.caPem, REGION));
    }
    servers.calm.handle((_req, res, url) => {
      const items =
        url.pathname === NODECLASSES
          ? [
              aNodeClassObject({
                name: 'imdsv1',
                spec: { metadataOptions: { httpTokens: 'optional' } },
              }),
            ]
          : [];
      sendJson(res, 200, { items });
    });
  });

  afterAll(async () => {
    eksMock.restore();
    await Promise.all(Object.values(servers).map((server) => server.close()));
  });

  const listBody = fc.oneof(
    fc.record({ items: fc.array(oddValue, { maxLength: 4 }) }),
    fc.record({
      items: fc.array(
        fc.record({
          apiVersion: fc.oneof(fc.constant('karpenter.k8s.aws/v1'), oddValue),
          kind: fc.oneof(fc.constant('EC2NodeClass'), oddValue),
          metadata: fc.oneof(fc.record({ name: oddValue }), oddValue),
          spec: oddValue,
        }),
        { maxLength: 4 }
      ),
      metadata: fc.oneof(fc.record({ continue: fc.oneof(fc.constant(''), oddValue) }), oddValue),
    }),
    oddValue
  );
  const response = fc.record({
    status: fc.constantFrom(200, 200, 200, 204, 301, 401, 403, 404, 410, 429, 500),
    body: listBody,
    truncate: fc.option(fc.nat({ max: 200 }), { nil: undefined }),
  });

  it('never crashes, and the calm cluster keeps its findings', async () => {
    await fc.assert(
      fc.asyncProperty(response, async ({ status, body, truncate }) => {
        servers.fuzzed.handle((_req, res) => {
          const text = JSON.stringify(body) ?? 'null';
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(truncate === undefined ? text : text.slice(0, truncate));
        });
        const plan = {
          objects: createClusterSource({
            region: REGION,
            clusters: ['calm', 'fuzzed'],
            eks: createEksReader({ eks: new EKSClient({ region: REGION }) }),
            tokens: { token: async () => 'k8s-aws-v1.test' },
            kubeLimits: { requestDeadlineMs: 2_000, listDeadlineMs: 4_000, maxListPages: 5 },
          }),
        };
        const report = await runScan(plan, {
          now: SCAN_TIME,
          only: ['scanner-can-read-cluster', 'imds-v2-required', 'nodeclass-schema-valid'],
        });
        expect(reportProblems(report)).toEqual([]);
        const calm = report.findings.filter((finding) => finding.resource.cluster === 'calm');
        expect(calm.map((finding) => `${finding.checkId} ${finding.status}`)).toEqual(
          expect.arrayContaining(['imds-v2-required fail', 'scanner-can-read-cluster pass'])
        );
        expect(report.summary.clusters).toEqual(['calm', 'fuzzed']);
      }),
      { numRuns: propertyRuns(60) }
    );
  }, 180_000);
});
