// Every check's declared material paths must select something in the findings it really produces:
// a path that is never present would leave a material change unnoticed.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createManifestSource } from '../../../lambda/adapters/files/manifest-source.js';
import type { ScanPlan } from '../../../lambda/app/run-scan.js';
import { buildWorldPlan } from '../../../lambda/cli/plan-world.js';
import { scopeOf } from '../../../lambda/core/check.js';
import { CHECKS } from '../../../lambda/core/checks/index.js';
import { runChecks } from '../../../lambda/core/evaluate.js';
import type { AwsNodeClassFacts } from '../../../lambda/core/facts/aws.js';
import type { PermissionFacts } from '../../../lambda/core/facts/permissions.js';
import { ok, unavailable } from '../../../lambda/core/facts/slice.js';
import { emptyInventory, type Inventory } from '../../../lambda/core/inventory.js';
import { selectMaterial } from '../../../lambda/core/material.js';
import type { Finding } from '../../../lambda/core/model.js';
import { parseNodePool } from '../../../lambda/core/schema.js';
import { anAmiFacts, anAwsInventory, someAwsFacts } from '../../support/aws-builders.js';
import { aNodeClassObject, anInventory } from '../../support/builders.js';
import { catalog, offeringsIn } from '../../support/instance-types.js';
import { aNodePoolObject, requirement, withNodePools } from '../../support/nodepool-builders.js';
import {
  aControllerRole,
  aPermissionsInventory,
  withSimulations,
} from '../../support/permission-builders.js';
import { aUserDataNodeClass, BROKEN_TOML } from '../../support/user-data-builders.js';

const EXAMPLES = join(import.meta.dirname, '../../../examples');
/** Shortly after the example world was recorded. */
const NOW = new Date('2026-11-22T12:00:00Z');

async function collect(plan: ScanPlan): Promise<Inventory> {
  const loaded = await plan.objects.load();
  let inventory = emptyInventory({
    inputs: new Set(['spec', ...loaded.inputs]),
    environment: plan.environment ?? 'production',
    clusters: loaded.clusters,
    nodeClasses: loaded.nodeClasses,
    nodePools: loaded.nodePools,
  });
  for (const enricher of plan.enrichers ?? []) inventory = await enricher.enrich(inventory);
  return inventory;
}

const denied = <T>() => unavailable<T>('access-denied', 'User is not authorized');

/** The example world as a scanner with no read access at all would see it. */
function nothingReadable(world: Inventory): Inventory {
  const awsFacts = new Map(
    [...world.awsFacts].map(([key, facts]): [string, AwsNodeClassFacts] => [
      key,
      Object.fromEntries(Object.keys(facts).map((slice) => [slice, denied()])),
    ])
  );
  const permissions = new Map(
    [...world.permissions].map(([key, facts]): [string, PermissionFacts] => [
      key,
      {
        ...facts,
        controllerRole: {
          status: 'unavailable',
          reason: 'access-denied',
          message: 'eks:ListPodIdentityAssociations denied',
          lookedAt: [],
          notes: [],
        },
      },
    ])
  );
  const clusters = world.clusters.map((cluster) => ({
    ...cluster,
    aws: denied<never>(),
    state: {
      read: denied<never>(),
      readFailure: {
        kind: 'http' as const,
        httpStatus: 403,
        path: '/apis/karpenter.k8s.aws/v1/ec2nodeclasses',
      },
    },
  }));
  return { ...world, awsFacts, permissions, clusters };
}

/** Failures the example files and world do not show: each a real check input. */
function scenarios(): Inventory[] {
  const launchDryRun = {
    dryRun: [
      {
        operation: 'RunInstances' as const,
        outcome: 'rejected' as const,
        code: 'InvalidBlockDeviceMapping',
        message: 'snapshot larger than the volume',
      },
    ],
  };
  const refusedAlias = ok(
    anAmiFacts({
      images: [],
      alias: {
        alias: 'al2@latest',
        family: 'al2',
        version: 'latest',
        kubernetesVersion: '1.33',
        unsupported: 'AL2 aliases are not supported on Kubernetes 1.33+',
        parameters: [],
      },
    })
  );
  const unreadableParameter = ok(
    anAmiFacts({
      images: [],
      ssmParameters: [{ termIndex: 1, name: '/team/ami', value: denied() }],
    })
  );
  const twoTerms = aNodeClassObject({
    spec: { amiFamily: 'AL2023', amiSelectorTerms: [{ name: 'team-*' }, { ssmParameter: '/x' }] },
  });
  const lyingStatus = aNodeClassObject({
    spec: { role: undefined, instanceProfile: 'arn:aws:iam::111122223333:instance-profile/p' },
    status: { conditions: [{ type: 'InstanceProfileReady', status: 'True' }] },
  });
  const legacyNodePool = {
    cluster: '',
    name: 'legacy',
    parsed: parseNodePool({
      apiVersion: 'karpenter.sh/v1beta1',
      kind: 'NodePool',
      metadata: { name: 'legacy' },
      spec: {
        template: {
          spec: {
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
            requirements: [],
          },
        },
      },
    }),
  };
  return [
    // Every controller-* group denied; then unconcluded (missing keys); then unsimulated.
    withSimulations(aPermissionsInventory(), () => ({ decision: 'implicitDeny' }), launchDryRun),
    withSimulations(aPermissionsInventory(), () => ({ missingContextValues: ['aws:SourceVpc'] })),
    withSimulations(aPermissionsInventory(), () => 'unavailable'),
    anAwsInventory([aNodeClassObject()], someAwsFacts({ amis: refusedAlias })),
    anAwsInventory([twoTerms], someAwsFacts({ amis: unreadableParameter })),
    anInventory([lyingStatus], { cluster: { name: 'prod' }, inputs: ['spec', 'cluster'] }),
    // A v1beta1 NodePool (nodepool-schema-valid's apiVersion) and a kubelet Karpenter rejects.
    anInventory([aNodeClassObject({ spec: { kubelet: { podsPerCore: 'ten' } } })], {
      overrides: { nodePools: [legacyNodePool] },
    }),
    // userData Karpenter cannot parse, and userData over EC2's 16 KB limit.
    anInventory([
      aUserDataNodeClass('Bottlerocket', BROKEN_TOML),
      aUserDataNodeClass('Custom', `karpenter.sh/unregistered\n${'x'.repeat(17_000)}`),
    ]),
    // An arm64 NodePool on x86 images without the region's instance types (the fallback verdict),
    // and minValues the instance types left cannot meet.
    withNodePools(anAwsInventory([aNodeClassObject()], someAwsFacts()), [
      aNodePoolObject({ requirements: [requirement('kubernetes.io/arch', 'In', ['arm64'])] }),
    ]),
    withNodePools(
      anAwsInventory(
        [aNodeClassObject()],
        someAwsFacts({
          instanceTypes: ok({ types: catalog() }),
          instanceTypeOfferings: ok({ offerings: offeringsIn(['us-east-1a']) }),
        })
      ),
      [
        aNodePoolObject({
          requirements: [
            { ...requirement('karpenter.k8s.aws/instance-family', 'Exists'), minValues: 50 },
          ],
        }),
      ]
    ),
    // kubelet maxPods above the ENI limit of the small types.
    withNodePools(
      anAwsInventory(
        [aNodeClassObject({ spec: { kubelet: { maxPods: 110 } } })],
        someAwsFacts({
          instanceTypes: ok({ types: catalog() }),
          instanceTypeOfferings: ok({ offerings: offeringsIn(['us-east-1a']) }),
        })
      ),
      [aNodePoolObject({})]
    ),
    // A Spot NodePool whose account's Spot service-linked role could not be read.
    withSimulations(
      aPermissionsInventory({
        nodePools: [
          {
            cluster: 'demo',
            name: 'spot',
            parsed: parseNodePool(
              aNodePoolObject({
                name: 'spot',
                nodeClass: 'default',
                requirements: [requirement('karpenter.sh/capacity-type', 'In', ['spot'])],
              })
            ),
          },
        ],
      }),
      undefined,
      { spotServiceLinkedRole: unavailable('access-denied', 'iam:GetRole denied') }
    ),
    // A customer KMS key for EBS whose policy lets the controller role do nothing.
    ebsKeyNobodyMayUse(),
  ];
}

function ebsKeyNobodyMayUse(): Inventory {
  const keyArn = 'arn:aws:kms:us-east-1:111122223333:key/k-1';
  const base = anAwsInventory(
    [
      aNodeClassObject({
        spec: {
          blockDeviceMappings: [
            { deviceName: '/dev/xvda', ebs: { encrypted: true, kmsKeyID: 'alias/nodes' } },
          ],
        },
      }),
    ],
    {
      ebsKeys: ok({
        keys: [
          {
            reference: 'alias/nodes',
            lookup: ok({
              key: { keyId: 'k-1', arn: keyArn, state: 'Enabled', manager: 'CUSTOMER' },
              policy: ok('{"Version":"2012-10-17","Statement":[]}'),
              grants: ok([]),
            }),
          },
        ],
      }),
    }
  );
  const controllerRole = aControllerRole();
  return {
    ...base,
    inputs: new Set([...base.inputs, 'permissions']),
    permissions: new Map(
      [...base.awsFacts.keys()].map((key) => [key, { controllerRole, simulations: [], gaps: [] }])
    ),
  };
}

async function sources(): Promise<Record<string, Inventory>> {
  const options = { now: NOW, environment: 'production' as const, readStdin: async () => '' };
  const manifests = await collect({
    objects: createManifestSource({
      paths: [join(EXAMPLES, 'nodeclasses')],
      cluster: { name: '', partition: 'aws' },
    }),
  });
  const world = await collect(
    await buildWorldPlan({
      ...options,
      world: join(EXAMPLES, 'world.json'),
      paths: [],
      clusters: [],
    })
  );
  return {
    'examples/nodeclasses': manifests,
    'examples/world.json': world,
    'examples/world.json, nothing readable': nothingReadable(world),
    ...Object.fromEntries(scenarios().map((inventory, index) => [`scenario ${index}`, inventory])),
  };
}

/** A path selects something: a value, or for `key[].field` at least one item's field. */
function present(finding: Finding, path: string): boolean {
  const value = selectMaterial(finding.evidence, path);
  if (value === undefined) return false;
  return !path.includes('[].') || (Array.isArray(value) && value.some((v) => v !== undefined));
}

describe('material paths of the catalog', async () => {
  const inventories = await sources();
  const findings = Object.values(inventories).flatMap(
    (inventory) => runChecks(inventory, CHECKS, { now: NOW }).findings
  );
  const failing = findings.filter(
    (finding) => finding.status === 'fail' || finding.status === 'error'
  );

  // The declared scope is what docs/checks/ and the catalog say a check reports on.
  it('declare the scope of every check: the kinds of object its findings are about', () => {
    const outside = CHECKS.flatMap((check) => {
      const kinds = new Set(
        findings.filter((finding) => finding.checkId === check.id).map((f) => f.resource.kind)
      );
      return [...kinds]
        .filter((kind) => !scopeOf(check).includes(kind))
        .map((kind) => `${check.id}: ${kind}`);
    });
    expect(outside).toEqual([]);
    const unused = CHECKS.flatMap((check) =>
      scopeOf(check)
        .filter((kind) => !findings.some((f) => f.checkId === check.id && f.resource.kind === kind))
        .map((kind) => `${check.id}: ${kind}`)
    );
    expect(unused).toEqual([]);
  });

  it('are declared by every check, as key or key[].field', () => {
    for (const check of CHECKS) {
      expect({ check: check.id, declares: check.material.length > 0 }).toEqual({
        check: check.id,
        declares: true,
      });
      for (const path of check.material)
        expect(path).toMatch(/^[A-Za-z][A-Za-z0-9]*(\[\]\.[A-Za-z][A-Za-z0-9]*)?$/);
    }
  });

  it('are exercised: every check fails or errors on the examples or a scenario', () => {
    const silent = CHECKS.filter(
      (check) => !failing.some((finding) => finding.checkId === check.id)
    ).map((check) => check.id);
    expect(silent).toEqual([]);
  });

  it('each select something in a failing finding the check produces', () => {
    const neverPresent = CHECKS.flatMap((check) => {
      const own = failing.filter((finding) => finding.checkId === check.id);
      return check.material
        .filter((path) => !own.some((finding) => present(finding, path)))
        .map((path) => `${check.id}: ${path}`);
    });
    expect(neverPresent).toEqual([]);
  });

  it('select the failing subnets of the world example by id, not by free count', () => {
    const edge = failing.find(
      (finding) => finding.checkId === 'subnets-have-free-ips' && finding.resource.name === 'edge'
    );
    expect(selectMaterial(edge?.evidence ?? {}, 'subnets[].id')).toEqual([
      'subnet-0e1d2c3b4a5968722',
      'subnet-0e1d2c3b4a5968721',
    ]);
  });
});
