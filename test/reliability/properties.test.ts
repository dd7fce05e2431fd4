// Property-based: whatever a NodeClass object or an event looks like, nothing crashes, every
// NodeClass is accounted for in a valid report, and events are either used or ignored with a reason.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createWorldSdk } from '../../bench/world-sdk.js';
import amiTemplate from '../../examples/events/ami-state-change-available.json' with {
  type: 'json',
};
import iamTemplate from '../../examples/events/iam-attach-role-policy.json' with { type: 'json' };
import { createLiveAwsFacts } from '../../lambda/adapters/aws/aws-facts-adapter.js';
import { createIamEntityReader } from '../../lambda/adapters/aws/iam-entities.js';
import type { World } from '../../lambda/adapters/world/schema.js';
import { handleAmiEvent } from '../../lambda/app/handle-ami-event.js';
import { handleIamEvent } from '../../lambda/app/handle-iam-event.js';
import { imageMatchesTerm } from '../../lambda/core/ami/queries.js';
import { parseAmiStateChange, parseIamChange } from '../../lambda/core/events.js';
import { aNodeClassObject } from '../support/builders.js';
import { InMemoryFindingStore, RecordingMetrics, silentLogger } from '../support/service-fakes.js';
import { exampleWorld, reportProblems, SCAN_TIME, scanWorld } from './support.js';

const base = exampleWorld();
const cluster = base.eks.clusters[0];

function worldWith(nodeClasses: readonly unknown[]): World {
  if (!cluster?.kubernetes) throw new Error('example world has no Kubernetes objects');
  return {
    ...base,
    eks: {
      clusters: [
        {
          ...cluster,
          kubernetes: { ...cluster.kubernetes, ec2NodeClasses: [...nodeClasses], nodePools: [] },
        },
      ],
    },
  };
}

const scalar = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom(
    'al2023@latest',
    'bottlerocket@v1.50.0',
    'arn:aws:iam::111122223333:role/x',
    'ami-0123456789abcdef0',
    '*',
    ''
  ),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null)
);
const value = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    scalar,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(
      fc.constantFrom('tags', 'name', 'id', 'alias', 'owner', 'ssmParameter', 'x'),
      tie('value'),
      { maxKeys: 3 }
    )
  ),
})).value;

const SPEC_FIELDS = [
  'amiSelectorTerms',
  'amiFamily',
  'role',
  'instanceProfile',
  'subnetSelectorTerms',
  'securityGroupSelectorTerms',
  'capacityReservationSelectorTerms',
  'metadataOptions',
  'blockDeviceMappings',
  'tags',
  'userData',
  'kubelet',
] as const;

/** A valid NodeClass with some spec fields replaced, dropped, or the whole object mangled. */
const nodeClassObject = fc.oneof(
  fc
    .record({
      name: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
      spec: fc.dictionary(fc.constantFrom(...SPEC_FIELDS), value, { maxKeys: 4 }),
    })
    .map(({ name, spec }) => aNodeClassObject({ name, spec })),
  value.map((mangled) => ({
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'mangled' },
    spec: mangled,
  }))
);

describe('NodeClass objects (property)', () => {
  it('never crash a scan; every NodeClass gets findings in a valid report', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(nodeClassObject, {
          maxLength: 3,
          selector: (o) => JSON.stringify((o as { metadata?: unknown }).metadata),
        }),
        async (objects) => {
          const { report } = await scanWorld(worldWith(objects));
          expect(reportProblems(report)).toEqual([]);
          const resources = new Set(
            report.findings
              .filter((f) => f.resource.kind === 'EC2NodeClass')
              .map((f) => f.resource.name)
          );
          expect(resources.size + report.summary.inputErrors.length).toBeGreaterThanOrEqual(
            objects.length
          );
        }
      ),
      { numRuns: 40, seed: 8 }
    );
  });
});

const mutatedEvent = <T extends object>(template: T) =>
  fc.oneof(
    fc.anything(),
    fc
      .tuple(fc.constantFrom(...Object.keys(template)), fc.anything())
      .map(([key, replacement]) => ({ ...template, [key]: replacement })),
    fc
      .tuple(fc.constantFrom('ImageId', 'State', 'eventName', 'requestParameters'), fc.anything())
      .map(([key, replacement]) => ({
        ...template,
        detail: { ...(template as { detail: object }).detail, [key]: replacement },
      }))
  );

describe('events (property)', () => {
  it('parsers never throw on any input', () => {
    fc.assert(
      fc.property(fc.oneof(mutatedEvent(amiTemplate), mutatedEvent(iamTemplate)), (event) => {
        for (const parse of [parseAmiStateChange, parseIamChange]) {
          const parsed = parse(event);
          if (!parsed.ok) expect(parsed.reason).not.toBe('');
        }
      }),
      { numRuns: 300, seed: 8 }
    );
  });

  it('handlers use an event or ignore it with a reason, and never crash', async () => {
    const store = new InMemoryFindingStore();
    const sdk = createWorldSdk(base, { now: SCAN_TIME });
    const common = {
      store,
      scan: async () => ({ outcomes: [], failedClusters: [] }),
      metrics: new RecordingMetrics(),
      logger: silentLogger,
      homeRegion: 'eu-west-1',
    };
    await fc.assert(
      fc.asyncProperty(mutatedEvent(amiTemplate), mutatedEvent(iamTemplate), async (ami, iam) => {
        const outcomes = [
          await handleAmiEvent(
            {
              ...common,
              imagesIn: () => createLiveAwsFacts(sdk),
              matches: (image, term, context) => imageMatchesTerm(image, term, context),
            },
            ami
          ),
          await handleIamEvent({ ...common, iam: createIamEntityReader(sdk.iam) }, iam),
        ];
        for (const outcome of outcomes) {
          expect(['ignored', 'no-match', 'scanned']).toContain(outcome.status);
          if (outcome.status === 'ignored') expect(outcome.reason).not.toBe('');
        }
      }),
      { numRuns: 150, seed: 8 }
    );
  });
});
