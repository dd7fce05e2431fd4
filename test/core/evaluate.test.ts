import { describe, expect, it } from 'vitest';
import { type Check, defineCheck, type FindingDraft } from '../../lambda/core/check.js';
import { amiAliasResolves } from '../../lambda/core/checks/ami-alias-resolves.js';
import { amiSelectorPinned } from '../../lambda/core/checks/ami-selector-pinned.js';
import { amiSelectorResolves } from '../../lambda/core/checks/ami-selector-resolves.js';
import { controllerCanDiscover } from '../../lambda/core/checks/controller-can-discover.js';
import { controllerCanLaunch } from '../../lambda/core/checks/controller-can-launch.js';
import { controllerCanPassNodeRole } from '../../lambda/core/checks/controller-can-pass-node-role.js';
import { controllerRoleFound } from '../../lambda/core/checks/controller-role-found.js';
import { CHECKS } from '../../lambda/core/checks/index.js';
import { instanceProfileExists } from '../../lambda/core/checks/instance-profile-exists.js';
import { nodeClassSchemaValid } from '../../lambda/core/checks/nodeclass-schema-valid.js';
import { scannerCanReadCluster } from '../../lambda/core/checks/scanner-can-read-cluster.js';
import { runChecks } from '../../lambda/core/evaluate.js';
import type { AwsNodeClassFacts } from '../../lambda/core/facts/aws.js';
import { ok, unavailable } from '../../lambda/core/facts/slice.js';
import { type Inventory, nodeClassKey } from '../../lambda/core/inventory.js';
import type { Finding, ResourceRef } from '../../lambda/core/model.js';
import { FINDING_TEXT_BUDGET } from '../../lambda/core/text-budget.js';
import { anAmiFacts, someAwsFacts } from '../support/aws-builders.js';
import { aNodeClassObject, anInventory } from '../support/builders.js';
import {
  aCluster,
  aClusterState,
  aPermissionsInventory,
  CONTROLLER_ROLE,
  GPU_FACTS,
  withSimulations,
} from '../support/permission-builders.js';

const now = new Date('2026-11-01T00:00:00Z');

function finding(findings: readonly Finding[], checkId: string, name: string): Finding {
  const found = findings.find((item) => item.checkId === checkId && item.resource.name === name);
  if (found === undefined) throw new Error(`no ${checkId} finding on ${name}`);
  return found;
}

/** The permissions inventory with the `default` NodeClass given these AWS facts. */
function withDefaultFacts(facts: AwsNodeClassFacts, overrides: Partial<Inventory> = {}) {
  return aPermissionsInventory({
    awsFacts: new Map([
      [nodeClassKey('demo', 'default'), facts],
      [nodeClassKey('demo', 'gpu'), GPU_FACTS],
    ]),
    ...overrides,
  });
}

const noImage = someAwsFacts({ amis: ok(anAmiFacts({ images: [] })) });

describe('runChecks: follow-on findings', () => {
  it('links the launch permission error to the unresolved AMI', () => {
    // Prepare
    const inventory = withSimulations(withDefaultFacts(noImage));

    // Act
    const { findings } = runChecks(inventory, [amiSelectorResolves, controllerCanLaunch], { now });

    // Assess
    const root = finding(findings, 'ami-selector-resolves', 'default');
    const launch = finding(findings, 'controller-can-launch', 'default');
    expect(root.status).toBe('fail');
    expect(root.causedBy).toBeUndefined();
    expect(launch.status).toBe('error');
    expect(launch.message).toContain('resolved no image');
    expect(launch.causedBy).toBe(root.id);
  });

  it('leaves the launch permission error on its own when the AMI resolves', () => {
    // Prepare: the image resolves; the simulator cannot conclude (a context key is missing).
    const inventory = withSimulations(withDefaultFacts(someAwsFacts()), (request) =>
      request.kind === 'run-instances' ? { missingContextValues: ['ec2:MetadataHttpTokens'] } : {}
    );

    // Act
    const { findings } = runChecks(inventory, [amiSelectorResolves, controllerCanLaunch], { now });

    // Assess
    expect(finding(findings, 'ami-selector-resolves', 'default').status).toBe('pass');
    const launch = finding(findings, 'controller-can-launch', 'default');
    expect(launch.status).toBe('error');
    expect(launch.causedBy).toBeUndefined();
  });

  it('leaves the follow-on on its own when its root check was not run', () => {
    // Prepare: the AMI facts say "no image", but the AWS-backed checks are not selected/run.
    const base = withSimulations(withDefaultFacts(noImage));
    const inventory = { ...base, inputs: new Set([...base.inputs].filter((i) => i !== 'aws')) };

    // Act
    const evaluation = runChecks(inventory, [amiSelectorResolves, controllerCanLaunch], { now });

    // Assess
    expect(evaluation.notRun.map((item) => item.checkId)).toEqual(['ami-selector-resolves']);
    const launch = finding(evaluation.findings, 'controller-can-launch', 'default');
    expect(launch.status).toBe('error');
    expect(launch.causedBy).toBeUndefined();
  });

  it('never treats a failed simulation call as a follow-on', () => {
    // Prepare: the AMI is unresolved, and the simulator itself is throttled.
    const inventory = withSimulations(withDefaultFacts(noImage), () => 'unavailable');

    // Act
    const { findings } = runChecks(inventory, [amiSelectorResolves, controllerCanLaunch], { now });

    // Assess
    const launch = finding(findings, 'controller-can-launch', 'default');
    expect(launch.status).toBe('error');
    expect(launch.causedBy).toBeUndefined();
  });

  it('puts an alias that resolves to nothing at the root of the selector and launch findings', () => {
    // Prepare
    const parameter = '/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/x86_64/standard/x';
    const facts = someAwsFacts({
      amis: ok({
        ssmParameters: [],
        alias: {
          alias: 'al2023@v20251001',
          family: 'al2023',
          version: 'v20251001',
          kubernetesVersion: '1.32',
          parameters: [
            { name: parameter, architecture: 'x86_64', variants: [], value: ok(undefined) },
          ],
        },
        available: ok({ queries: [], matchCount: 0, selected: [] }),
        ignoringState: ok({ queries: [], matchCount: 0, selected: [] }),
      }),
    });
    const inventory = withSimulations(withDefaultFacts(facts));

    // Act
    const { findings } = runChecks(
      inventory,
      [amiAliasResolves, amiSelectorResolves, controllerCanLaunch],
      { now }
    );

    // Assess
    const alias = finding(findings, 'ami-alias-resolves', 'default');
    expect(alias.status).toBe('fail');
    expect(alias.causedBy).toBeUndefined();
    expect(finding(findings, 'ami-selector-resolves', 'default').causedBy).toBe(alias.id);
    expect(finding(findings, 'controller-can-launch', 'default').causedBy).toBe(alias.id);
  });

  it('links PassRole to the missing instance profile', () => {
    // Prepare: gpu's profile does not exist, so its role is unknown.
    const inventory = withSimulations(
      aPermissionsInventory({
        awsFacts: new Map([
          [
            nodeClassKey('demo', 'gpu'),
            {
              instanceProfile: ok({ name: 'GpuNodeProfile' }),
              nodeRole: ok({ source: 'instance-profile' }),
            },
          ],
        ]),
      })
    );

    // Act
    const { findings } = runChecks(inventory, [instanceProfileExists, controllerCanPassNodeRole], {
      now,
    });

    // Assess
    const root = finding(findings, 'instance-profile-exists', 'gpu');
    const passRole = finding(findings, 'controller-can-pass-node-role', 'gpu');
    expect(root.status).toBe('fail');
    expect(passRole.status).toBe('error');
    expect(passRole.causedBy).toBe(root.id);
  });

  it('links every permission check to the missing controller role, found on the cluster', () => {
    // Prepare: no IRSA annotation, no Pod Identity association.
    const state = aClusterState();
    const inventory = withSimulations(aPermissionsInventory({ clusters: [aCluster({ state })] }));

    // Act
    const { findings } = runChecks(
      inventory,
      [controllerRoleFound, controllerCanLaunch, controllerCanDiscover],
      { now }
    );

    // Assess
    const root = finding(findings, 'controller-role-found', 'demo');
    expect(root.status).toBe('fail');
    expect(root.resource).toEqual({ cluster: 'demo', kind: 'Cluster', name: 'demo' });
    const followOns = findings.filter((item) => item.checkId !== 'controller-role-found');
    expect(followOns).toHaveLength(4);
    for (const followOn of followOns) {
      expect(followOn.status).toBe('error');
      expect(followOn.causedBy).toBe(root.id);
    }
  });

  it('follows the chain to the unreadable controller Deployment', () => {
    // Prepare: the controller could not be read, so its role is unknown.
    const state = {
      ...aClusterState({ irsaRoleArn: CONTROLLER_ROLE }),
      controller: unavailable<never>('access-denied', 'deployments is forbidden'),
    };
    const inventory = withSimulations(aPermissionsInventory({ clusters: [aCluster({ state })] }));

    // Act
    const { findings } = runChecks(
      inventory,
      [scannerCanReadCluster, controllerRoleFound, controllerCanLaunch],
      { now }
    );

    // Assess
    const root = findings.find(
      (item) => item.checkId === 'scanner-can-read-cluster' && item.status === 'fail'
    );
    expect(root?.message).toContain('Karpenter controller');
    expect(finding(findings, 'controller-role-found', 'demo').causedBy).toBe(root?.id);
    expect(finding(findings, 'controller-can-launch', 'default').causedBy).toBe(root?.id);
  });

  it('links the launch error to NodePools the scanner could not list', () => {
    // Prepare
    const state = {
      ...aClusterState({ irsaRoleArn: CONTROLLER_ROLE }),
      nodePools: unavailable<never>('access-denied', 'nodepools is forbidden'),
    };
    const inventory = withSimulations(
      aPermissionsInventory({ clusters: [aCluster({ state })], nodePools: [] })
    );

    // Act
    const { findings } = runChecks(inventory, [scannerCanReadCluster, controllerCanLaunch], {
      now,
    });

    // Assess
    const root = findings.find(
      (item) => item.checkId === 'scanner-can-read-cluster' && item.status === 'fail'
    );
    expect(root?.message).toContain('NodePools');
    const launch = finding(findings, 'controller-can-launch', 'default');
    expect(launch.status).toBe('error');
    expect(launch.causedBy).toBe(root?.id);
  });

  it('raises one root for an object that is not a valid EC2NodeClass', () => {
    // Prepare
    const broken = {
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: { name: 'broken' },
      spec: { role: 'KarpenterNodeRole' },
    };

    // Act
    const { findings } = runChecks(
      anInventory([broken]),
      CHECKS.filter((check) => check.group === 'spec'),
      { now }
    );

    // Assess
    const roots = findings.filter((item) => item.checkId === nodeClassSchemaValid.id);
    expect(roots.length).toBeGreaterThan(0);
    const followOns = findings.filter((item) => item.checkId !== nodeClassSchemaValid.id);
    expect(followOns.length).toBeGreaterThan(5);
    for (const followOn of followOns) {
      expect(followOn.status).toBe('error');
      expect(roots.map((root) => root.id)).toContain(followOn.causedBy);
    }
  });
});

describe('runChecks: root-cause linking', () => {
  const on = (name: string): ResourceRef => ({ cluster: 'c', kind: 'EC2NodeClass', name });
  const nodeClasses = anInventory([], { cluster: { name: 'c' } });

  function aCheck(id: string, drafts: readonly FindingDraft[]): Check {
    return defineCheck({
      id,
      title: id,
      group: 'spec',
      severity: 'high',
      inputs: [],
      rationale: '',
      remediation: '',
      references: [],
      material: [],
      evaluate: () => drafts,
    });
  }

  const run = (...checks: Check[]) => runChecks(nodeClasses, checks, { now }).findings;
  const byCheck = (findings: readonly Finding[], id: string) =>
    findings.filter((item) => item.checkId === id);

  it('links to the root only when it fails or errors on the same resource', () => {
    // Act
    const findings = run(
      aCheck('root', [
        { status: 'pass', resource: on('a'), message: 'ok' },
        { status: 'fail', resource: on('b'), message: 'broken' },
      ]),
      aCheck('follow', [
        { status: 'error', resource: on('a'), message: 'n/e', causedBy: { checkId: 'root' } },
        { status: 'error', resource: on('b'), message: 'n/e', causedBy: { checkId: 'root' } },
      ])
    );

    // Assess
    const [rootA, rootB] = byCheck(findings, 'root');
    const [followA, followB] = byCheck(findings, 'follow');
    expect(rootA?.status).toBe('pass');
    expect(followA?.causedBy).toBeUndefined();
    expect(followB?.causedBy).toBe(rootB?.id);
  });

  it('finds the root on the resource the draft names', () => {
    // Act
    const cluster: ResourceRef = { cluster: 'c', kind: 'Cluster', name: 'c' };
    const findings = run(
      aCheck('root', [{ status: 'error', resource: cluster, message: 'unreadable' }]),
      aCheck('follow', [
        {
          status: 'error',
          resource: on('a'),
          message: 'n/e',
          causedBy: { checkId: 'root', resource: cluster },
        },
      ])
    );

    // Assess
    expect(byCheck(findings, 'follow')[0]?.causedBy).toBe(byCheck(findings, 'root')[0]?.id);
  });

  it('points a chain of follow-ons at the finding that has no root of its own', () => {
    // Act
    const findings = run(
      aCheck('first', [{ status: 'fail', resource: on('a'), message: 'root' }]),
      aCheck('second', [
        { status: 'fail', resource: on('a'), message: 'm', causedBy: { checkId: 'first' } },
      ]),
      aCheck('third', [
        { status: 'error', resource: on('a'), message: 'm', causedBy: { checkId: 'second' } },
      ])
    );

    // Assess
    const rootId = byCheck(findings, 'first')[0]?.id;
    expect(byCheck(findings, 'second')[0]?.causedBy).toBe(rootId);
    expect(byCheck(findings, 'third')[0]?.causedBy).toBe(rootId);
  });

  it('keeps a failing follow-on more severe than its root on its own, and links its errors there', () => {
    // Act: a high root must not hide a critical "cannot launch"
    const findings = run(
      aCheck('first', [{ status: 'fail', resource: on('a'), message: 'root' }]),
      aCheck('second', [
        {
          status: 'fail',
          resource: on('a'),
          message: 'm',
          severity: 'critical',
          causedBy: { checkId: 'first' },
        },
      ]),
      aCheck('third', [
        {
          status: 'error',
          resource: on('a'),
          message: 'm',
          severity: 'critical',
          causedBy: { checkId: 'second' },
        },
      ])
    );

    // Assess
    const second = byCheck(findings, 'second')[0];
    expect(second?.causedBy).toBeUndefined();
    expect(byCheck(findings, 'third')[0]?.causedBy).toBe(second?.id);
  });

  it('never links a passing or not-applicable finding', () => {
    // Act
    const findings = run(
      aCheck('root', [{ status: 'fail', resource: on('a'), message: 'broken' }]),
      aCheck('follow', [
        {
          status: 'not-applicable',
          resource: on('a'),
          message: 'n/a',
          discriminator: '1',
          causedBy: { checkId: 'root' },
        },
        {
          status: 'pass',
          resource: on('a'),
          message: 'ok',
          discriminator: '2',
          causedBy: { checkId: 'root' },
        },
      ])
    );

    // Assess
    expect(byCheck(findings, 'follow').map((item) => item.causedBy)).toEqual([
      undefined,
      undefined,
    ]);
  });

  it('links nothing in a loop', () => {
    // Act
    const findings = run(
      aCheck('x', [
        { status: 'fail', resource: on('a'), message: 'm', causedBy: { checkId: 'y' } },
      ]),
      aCheck('y', [{ status: 'fail', resource: on('a'), message: 'm', causedBy: { checkId: 'x' } }])
    );

    // Assess
    expect(findings.map((item) => item.causedBy)).toEqual([undefined, undefined]);
  });

  it('prefers a root finding that is not a follow-on, then the most severe', () => {
    // Act
    const findings = run(
      aCheck('other', [{ status: 'fail', resource: on('a'), message: 'm' }]),
      aCheck('root', [
        {
          status: 'error',
          resource: on('a'),
          message: 'follow-on',
          severity: 'critical',
          discriminator: '1',
          causedBy: { checkId: 'missing' },
        },
        { status: 'fail', resource: on('a'), message: 'low', severity: 'low', discriminator: '2' },
        { status: 'fail', resource: on('a'), message: 'high', discriminator: '3' },
      ]),
      aCheck('follow', [
        { status: 'error', resource: on('a'), message: 'm', causedBy: { checkId: 'root' } },
      ])
    );

    // Assess
    const high = findings.find((item) => item.message === 'high');
    expect(byCheck(findings, 'follow')[0]?.causedBy).toBe(high?.id);
  });
});

describe('runChecks: bounded finding text', () => {
  /** A NodeClass whose first AMI term is a wildcard name of `length` characters. */
  const withLongName = (length: number, last = 'a') =>
    anInventory([
      aNodeClassObject({
        name: 'poison',
        spec: { amiSelectorTerms: [{ name: `*${'a'.repeat(length - 2)}${last}` }] },
      }),
    ]);
  const pinned = (inventory: Inventory) =>
    finding(
      runChecks(inventory, [amiSelectorPinned], { now }).findings,
      'ami-selector-pinned',
      'poison'
    );

  it('makes findings within the text budgets, whatever the check quotes', () => {
    // Act: a 420,000-character name term
    const result = pinned(withLongName(420_000));

    // Assess: message and evidence are cut, and say so
    expect(Buffer.byteLength(result.message)).toBeLessThanOrEqual(FINDING_TEXT_BUDGET.message);
    expect(result.message).toMatch(/…\(41\d,\d{3} bytes elided\)$/);
    const name = String(result.evidence.name);
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(FINDING_TEXT_BUDGET.evidenceString);
    expect(name).toMatch(/^\*a+…\(41\d,\d{3} bytes elided\)$/);
    expect(result.location?.path).toBe('spec.amiSelectorTerms[0].name');
  });

  it('keeps the id and material hash of an unchanged finding from scan to scan', () => {
    const first = pinned(withLongName(420_000));
    const second = pinned(withLongName(420_000));
    expect(second.id).toBe(first.id);
    expect(second.materialHash).toBe(first.materialHash);
    // A name of another length is other material evidence (the elided count differs).
    expect(pinned(withLongName(420_001)).materialHash).not.toBe(first.materialHash);
  });
});
