// `snapshot` records each cluster's installed CRDs in the world file; `scan --world` admits the
// cluster's objects by them.
import { describe, expect, it } from 'vitest';
import type { AwsFactsClients } from '../../../lambda/adapters/aws/aws-facts-adapter.js';
import { buildWorld } from '../../../lambda/adapters/world/build-world.js';
import { createAwsRecorder } from '../../../lambda/adapters/world/recorder.js';
import { type World, WorldSchema } from '../../../lambda/adapters/world/schema.js';
import { createWorldObjectSource } from '../../../lambda/adapters/world/world-objects.js';
import { collectInventory } from '../../../lambda/app/run-scan.js';
import type { ClusterCrds } from '../../../lambda/core/admission/types.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import type { ClusterContext } from '../../../lambda/core/inventory.js';
import { aNodeClassCrd, aNodePoolCrd, fakeAdmissionEngine } from '../../support/admission-crds.js';
import { aNodeClassEntry, aNodeClassObject } from '../../support/builders.js';

const RECORDED_AT = new Date('2026-11-22T02:00:00Z');

const noCalls = {
  send: async () => {
    throw new Error('no AWS call expected');
  },
};

/** What a live read of cluster `prod` gave, written as `snapshot` writes it and read back. */
function snapshotOf(crds: ClusterCrds): World {
  const cluster: ClusterContext = {
    name: 'prod',
    region: 'us-iso-east-1',
    partition: 'aws-iso',
    state: { read: ok({ nodeClassCount: 1 }) },
    crds,
  };
  const world = buildWorld({
    account: '111122223333',
    region: 'us-iso-east-1',
    partition: 'aws-iso',
    recordedAt: RECORDED_AT,
    recorded: createAwsRecorder({
      ec2: noCalls,
      ssm: noCalls,
      iam: noCalls,
    } as unknown as AwsFactsClients).recorded(),
    loaded: {
      clusters: [cluster],
      nodeClasses: [
        aNodeClassEntry(aNodeClassObject({ spec: { metadataOptions: undefined } }), 'prod'),
      ],
      nodePools: [],
    },
  });
  return WorldSchema.parse(JSON.parse(JSON.stringify(world)));
}

const origin = { kind: 'cluster' as const, location: 'cluster prod' };

describe('world file: installed CRDs', () => {
  it('round-trips the CRDs through snapshot and admits the objects of a world scan by them', async () => {
    // Prepare
    const world = snapshotOf({
      nodeClass: {
        name: 'ec2nodeclasses.karpenter.k8s.aws',
        document: aNodeClassCrd({ ipv6Default: false }),
        origin,
      },
      nodePool: { name: 'nodepools.karpenter.sh', document: aNodePoolCrd(), origin },
    });
    const { engine } = fakeAdmissionEngine();

    // Act
    const { inventory } = await collectInventory(
      { objects: createWorldObjectSource({ world, file: 'world.json' }) },
      { admission: engine }
    );

    // Assess
    const recorded = world.eks.clusters[0]?.kubernetes?.crds ?? [];
    expect(recorded.map((crd) => crd.metadata.name)).toEqual([
      'ec2nodeclasses.karpenter.k8s.aws',
      'nodepools.karpenter.sh',
    ]);
    // Recorded without the server's bookkeeping or a last-applied copy of the document.
    expect(recorded[0]).not.toHaveProperty('status');
    expect(recorded[0]?.metadata).toEqual({
      name: 'ec2nodeclasses.karpenter.k8s.aws',
      annotations: {},
    });
    const crds = inventory.clusters[0]?.crds;
    expect(crds?.nodeClass?.origin).toEqual({
      kind: 'world',
      location: 'world.json (cluster prod)',
    });
    expect(crds?.nodeClass?.document).toEqual(recorded[0]);
    expect(crds?.nodePool?.name).toBe('nodepools.karpenter.sh');
    const [entry] = inventory.nodeClasses;
    expect(entry?.admission?.crd).toBe(
      'ec2nodeclasses.karpenter.k8s.aws from world.json (cluster prod)'
    );
    // The recorded CRD has no default: the stored object has no metadataOptions.
    expect(entry?.admission?.defaulted).not.toHaveProperty('spec.metadataOptions');
  });

  it('records why the CRDs could not be read, and replays it', async () => {
    // Prepare
    const world = snapshotOf({
      unavailable: 'the CRD nodepools.karpenter.sh may not be read (HTTP 403)',
      denied: true,
    });

    // Act
    const loaded = await createWorldObjectSource({ world, file: 'world.json' }).load();

    // Assess
    expect(world.eks.clusters[0]?.kubernetes).toMatchObject({
      crdsUnavailable: 'the CRD nodepools.karpenter.sh may not be read (HTTP 403)',
      crdsDenied: true,
    });
    expect(world.eks.clusters[0]?.kubernetes).not.toHaveProperty('crds');
    expect(loaded.clusters[0]?.crds).toEqual({
      unavailable: 'the CRD nodepools.karpenter.sh may not be read (HTTP 403)',
      denied: true,
    });
  });

  it('refuses a world file whose crds hold another CRD or the same one twice, naming the path', () => {
    // Prepare
    const base = {
      version: 1,
      account: '111122223333',
      region: 'us-east-1',
      eks: { clusters: [{ name: 'prod', kubernetes: { crds: [] as unknown[] } }] },
    };
    const other = { ...aNodePoolCrd(), metadata: { name: 'nodeclaims.karpenter.sh' } };

    // Act
    const wrongName = WorldSchema.safeParse({
      ...base,
      eks: { clusters: [{ name: 'prod', kubernetes: { crds: [other] } }] },
    });
    const twice = WorldSchema.safeParse({
      ...base,
      eks: { clusters: [{ name: 'prod', kubernetes: { crds: [aNodePoolCrd(), aNodePoolCrd()] } }] },
    });

    // Assess
    expect(wrongName.success).toBe(false);
    expect(wrongName.error?.issues[0]?.path).toEqual([
      'eks',
      'clusters',
      0,
      'kubernetes',
      'crds',
      0,
      'metadata',
      'name',
    ]);
    expect(twice.error?.issues[0]?.message).toBe('holds the same CRD twice');
  });
});
