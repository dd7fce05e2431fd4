// Hostile wildcard patterns: `*a*a*…*b` against long runs of `a` made the regex matcher backtrack
// for minutes. Each case must simply finish; the test timeouts are hang guards, not benchmarks.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseWorld } from '../../lambda/adapters/world/load-world.js';
import { createWorldAwsFacts } from '../../lambda/adapters/world/world-facts.js';
import { handleAmiEvent } from '../../lambda/app/handle-ami-event.js';
import type { ScanRequest } from '../../lambda/app/scan-and-publish.js';
import { imageMatchesTerm, termImageQuery } from '../../lambda/core/ami/queries.js';
import type { NodeClassIndexEntry } from '../../lambda/core/event-index.js';
import type { Image } from '../../lambda/core/facts/aws.js';
import type { ScanReport } from '../../lambda/core/report.js';
import { ec2WildcardMatches } from '../../lambda/core/selectors/ec2-filter.js';
import { runCliCaptured, tempTree } from '../cli/support/run-cli.js';
import { silentLogger } from '../support/service-fakes.js';

const HOSTILE = '*a*a*a*a*a*a*a*a*a*a*a*a*b';
const MATCHING = '*a*a*a*a*a*a*a*a*a*a*a*a*';
const LONG_NAME = 'a'.repeat(200);
const ACCOUNT = '111122223333';
const GUARD_MS = 60_000;

const imageIdOf = (index: number) => `ami-${index.toString(16).padStart(17, '0')}`;

describe('hostile wildcard patterns', () => {
  it(
    'rejects 10,000 names of 200 a’s against *a*…*b, and matches them against *a*…*',
    () => {
      const names = Array.from({ length: 10_000 }, () => LONG_NAME);
      expect(names.filter((name) => ec2WildcardMatches(HOSTILE, name))).toEqual([]);
      expect(names.filter((name) => ec2WildcardMatches(MATCHING, name))).toHaveLength(10_000);
    },
    GUARD_MS
  );

  it(
    'answers a DescribeImages name filter over 10,000 such images offline',
    async () => {
      const world = parseWorld(
        JSON.stringify({
          version: 1,
          account: ACCOUNT,
          region: 'us-east-1',
          ec2: {
            images: Array.from({ length: 10_000 }, (_, i) => ({
              ImageId: imageIdOf(i),
              Name: LONG_NAME,
              OwnerId: ACCOUNT,
              State: 'available',
            })),
          },
        }),
        'world.json'
      );
      const facts = createWorldAwsFacts({ world, now: new Date('2026-11-01T00:00:00Z') });
      const hostile = await facts.describeImages(termImageQuery({ name: HOSTILE, owner: 'self' }));
      const matching = await facts.describeImages(
        termImageQuery({ name: MATCHING, owner: 'self' })
      );
      expect(hostile).toEqual([]);
      expect(matching).toHaveLength(10_000);
    },
    GUARD_MS
  );

  it(
    'finishes a CLI --world scan whose NodeClass selects *a*…*b among 10,000 long names',
    async () => {
      // Prepare: the example account, one cluster, one hostile and one matching NodeClass
      const raw = JSON.parse(
        readFileSync(join(import.meta.dirname, '../../examples/world.json'), 'utf8')
      );
      const cluster = raw.eks.clusters[0];
      const template = cluster.kubernetes.ec2NodeClasses[0];
      const nodeClass = (name: string, pattern: string) => ({
        ...template,
        metadata: { ...template.metadata, name },
        spec: { ...template.spec, amiSelectorTerms: [{ name: pattern, owner: 'self' }] },
      });
      cluster.kubernetes.ec2NodeClasses = [
        nodeClass('hostile', HOSTILE),
        nodeClass('matching', MATCHING),
      ];
      cluster.kubernetes.nodePools = [];
      raw.eks.clusters = [cluster];
      raw.ec2.images.push(
        ...Array.from({ length: 10_000 }, (_, i) => ({
          ImageId: imageIdOf(i),
          Name: LONG_NAME,
          OwnerId: raw.account,
          State: 'available',
          Architecture: 'x86_64',
          CreationDate: '2026-10-01T00:00:00.000Z',
        }))
      );
      const tree = tempTree({});
      const file = join(tree.dir, 'world.json');
      writeFileSync(file, JSON.stringify(raw));
      try {
        // Act
        const run = await runCliCaptured(
          ['scan', '--world', file, '--format', 'json', '--only', 'ami-selector-resolves'],
          { now: new Date('2026-11-22T12:00:00Z') }
        );

        // Assess
        expect(run.code).toBe(1);
        const report = JSON.parse(run.stdout) as ScanReport;
        const statusOf = (name: string) =>
          report.findings
            .filter((finding) => finding.resource.name === name)
            .map((finding) => finding.status);
        expect(statusOf('hostile')).toEqual(['fail']);
        expect(statusOf('matching')).toEqual(['pass']);
      } finally {
        rmSync(tree.dir, { recursive: true, force: true });
      }
    },
    GUARD_MS
  );

  it(
    'finishes the AMI-event path for an image named with 150 a’s against 200 hostile terms',
    async () => {
      // Prepare
      const imageId = 'ami-0123456789abcdef0';
      const image: Image = {
        id: imageId,
        name: 'a'.repeat(150),
        ownerId: ACCOUNT,
        state: 'available',
        tags: {},
      };
      const entry = (name: string, pattern: string): NodeClassIndexEntry => ({
        cluster: 'c1',
        name,
        amiSelectorTerms: [{ name: pattern, owner: 'self' }],
        resolvedAmiIds: [],
      });
      const index = [
        ...Array.from({ length: 200 }, (_, i) => entry(`hostile-${i}`, HOSTILE)),
        entry('matching', MATCHING),
      ];
      const scans: ScanRequest[] = [];
      const event = JSON.parse(
        readFileSync(
          join(import.meta.dirname, '../../examples/events/ami-state-change-available.json'),
          'utf8'
        )
      );

      // Act
      const outcome = await handleAmiEvent(
        {
          imagesIn: () => ({ describeImages: async () => [image] }),
          homeRegion: 'eu-west-1',
          matches: imageMatchesTerm,
          store: { loadIndex: async () => index },
          metrics: { eventIgnored: () => {} },
          logger: silentLogger,
          scan: async (request) => {
            scans.push(request);
            return { outcomes: [], failedClusters: [] };
          },
        },
        event
      );

      // Assess: only the matching NodeClass is rescanned
      expect(outcome).toMatchObject({
        status: 'scanned',
        nodeClasses: [{ cluster: 'c1', name: 'matching' }],
      });
      expect(scans.map((scan) => scan.restrictTo)).toEqual([[{ cluster: 'c1', name: 'matching' }]]);
    },
    GUARD_MS
  );
});
