// Manifest scans admit objects by Karpenter's CRDs found among the scanned files (a GitOps copy of
// the karpenter-crd chart) or given with --crd; the isolated-region IPv6 check reads their defaults.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { collectInventory, evaluateInventory } from '../../lambda/app/run-scan.js';
import { buildPlan, type ScanCliOptions } from '../../lambda/cli/plan.js';
import { imdsIpv6Supported } from '../../lambda/core/checks/imds-ipv6-supported.js';
import { aNodeClassCrd, aNodePoolCrd, fakeAdmissionEngine } from '../support/admission-crds.js';
import { aNodeClassObject } from '../support/builders.js';
import { runCliCaptured, useTempTrees } from './support/run-cli.js';

const now = new Date('2026-11-01T00:00:00Z');

/** An ISO-region class on Karpenter 1.6.2 that leaves httpProtocolIPv6 to the CRD's default. */
const NODE_CLASS = stringify(
  aNodeClassObject({
    name: 'iso',
    spec: { metadataOptions: undefined },
    metadata: {
      annotations: {
        'nodeclass-scanner/region': 'us-iso-east-1',
        'nodeclass-scanner/karpenter-version': '1.6.2',
      },
    },
  })
);

const documents = (...objects: unknown[]) =>
  objects.map((object) => stringify(object)).join('---\n');

function options(paths: string[], extra: Partial<ScanCliOptions> = {}): ScanCliOptions {
  return {
    paths,
    clusters: [],
    aws: false,
    environment: 'production',
    readStdin: async () => '',
    now,
    ...extra,
  };
}

async function scan(paths: string[], extra: Partial<ScanCliOptions> = {}) {
  const { engine, loads } = fakeAdmissionEngine();
  const { inventory, inputErrors } = await collectInventory(
    await buildPlan(options(paths, extra)),
    {
      admission: engine,
    }
  );
  const findings = evaluateInventory(inventory, { now, checks: [imdsIpv6Supported] }).findings;
  return { inventory, inputErrors, findings, loads };
}

describe('CRDs among the scanned manifests', () => {
  const tree = useTempTrees();

  it('uses a CRD found among the files, and does not report it as an object', async () => {
    // Prepare: the chart's CRDs next to the objects, the IPv6 default removed (the workaround)
    const dir = tree({
      'crds/karpenter-crd.yaml': documents(aNodeClassCrd({ ipv6Default: false }), aNodePoolCrd()),
      'nodeclasses/iso.yaml': NODE_CLASS,
    });

    // Act
    const { inventory, inputErrors, findings, loads } = await scan([dir]);

    // Assess
    expect(inputErrors).toEqual([]);
    expect(inventory.nodeClasses.map((entry) => entry.name)).toEqual(['iso']);
    expect(inventory.nodePools).toEqual([]);
    const crdFile = join(dir, 'crds/karpenter-crd.yaml');
    expect(inventory.clusters[0]?.crds?.nodeClass?.origin).toEqual({
      kind: 'manifest',
      location: `${crdFile}:1`,
    });
    expect(inventory.clusters[0]?.crds?.nodePool?.origin.location).toMatch(
      /karpenter-crd\.yaml:\d+$/
    );
    expect(loads).toHaveLength(2);
    expect(findings.map((finding) => [finding.status, finding.evidence])).toEqual([
      ['pass', expect.objectContaining({ httpProtocolIPv6: 'unset' })],
    ]);
  });

  it('keeps the IPv6 finding when the CRD among the files still has the default', async () => {
    const dir = tree({
      'crds.yaml': stringify(aNodeClassCrd({ ipv6Default: true })),
      'iso.yaml': NODE_CLASS,
    });
    const { findings } = await scan([dir]);
    expect(findings[0]?.status).toBe('fail');
    expect(findings[0]?.message).toContain('(the default of the installed CRD ec2nodeclasses');
  });

  it('finds CRDs inside a List, as kubectl get crd -o yaml writes them', async () => {
    const dir = tree({
      'crds.yaml': stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [aNodeClassCrd({ ipv6Default: false })],
      }),
      'iso.yaml': NODE_CLASS,
    });
    const { inventory, findings } = await scan([dir]);
    expect(inventory.clusters[0]?.crds?.nodeClass?.origin.location).toMatch(/crds\.yaml:\d+$/);
    expect(findings[0]?.status).toBe('pass');
  });

  it('refuses to pick between two different CRDs of one name, and says which to give', async () => {
    // Prepare
    const dir = tree({
      'staging/crds.yaml': stringify(aNodeClassCrd({ ipv6Default: false })),
      'prod/crds.yaml': stringify(aNodeClassCrd({ ipv6Default: true })),
      'iso.yaml': NODE_CLASS,
    });

    // Act
    const { inventory, inputErrors, loads } = await scan([dir]);

    // Assess
    expect(inventory.clusters[0]?.crds).toBeUndefined();
    expect(loads).toEqual([]);
    expect(inputErrors).toHaveLength(1);
    expect(inputErrors[0]?.message).toMatch(
      /^2 different CustomResourceDefinitions ec2nodeclasses\.karpenter\.k8s\.aws \(.*prod\/crds\.yaml:1, .*staging\/crds\.yaml:1\): the objects are judged by the built-in rules; give the one the cluster runs with --crd$/
    );
  });
});

describe('--crd FILE', () => {
  const tree = useTempTrees();

  it('admits the manifests by the given CRD, in place of one found among the files', async () => {
    // Prepare
    const dir = tree({
      'repo/crds.yaml': stringify(aNodeClassCrd({ ipv6Default: true })),
      'repo/iso.yaml': NODE_CLASS,
      'installed.yaml': stringify(aNodeClassCrd({ ipv6Default: false })),
    });
    const given = join(dir, 'installed.yaml');

    // Act
    const { inventory, inputErrors, findings } = await scan([join(dir, 'repo')], {
      crdFiles: [given],
    });

    // Assess
    expect(inputErrors).toEqual([]);
    expect(inventory.clusters[0]?.crds?.nodeClass?.origin).toEqual({
      kind: 'file',
      location: `${given}:1`,
    });
    expect(findings[0]?.status).toBe('pass');
  });

  it('is an input error when the file holds no Karpenter CRD or cannot be read', async () => {
    // Prepare
    const dir = tree({ 'iso.yaml': NODE_CLASS, 'other.yaml': stringify(aNodeClassObject()) });

    // Act
    const { inputErrors, inventory } = await scan([join(dir, 'iso.yaml')], {
      crdFiles: [join(dir, 'other.yaml'), join(dir, 'missing.yaml')],
    });

    // Assess
    expect(inventory.clusters[0]?.crds).toBeUndefined();
    expect(inputErrors).toEqual([
      {
        source: join(dir, 'other.yaml'),
        message:
          '--crd: holds no CustomResourceDefinition ec2nodeclasses.karpenter.k8s.aws or nodepools.karpenter.sh (apiextensions.k8s.io/v1)',
      },
      { source: join(dir, 'missing.yaml'), message: '--crd: no such file or directory' },
    ]);
  });

  it('applies to manifest scans only: without paths it is a usage error', async () => {
    // Prepare
    const dir = tree({ 'crds.yaml': stringify(aNodeClassCrd()) });

    // Act
    const run = await runCliCaptured([
      'scan',
      '--world',
      'examples/world.json',
      '--crd',
      join(dir, 'crds.yaml'),
    ]);

    // Assess
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      '--crd gives the CRDs manifests are admitted by: give manifest paths too'
    );
  });

  it('is read from the config file as crd, relative to the file', async () => {
    // Prepare: a bad --crd path from the file is reported, proving the key reached the scan
    const dir = tree({
      'iso.yaml': NODE_CLASS,
      '.nodeclass-scanner.yaml': stringify({ crd: ['crds/missing.yaml'] }),
    });

    // Act
    const run = await runCliCaptured([
      'scan',
      join(dir, 'iso.yaml'),
      '--config',
      join(dir, '.nodeclass-scanner.yaml'),
      '--format',
      'json',
    ]);

    // Assess
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `${join(dir, 'crds/missing.yaml')}: --crd: no such file or directory`
    );
  });
});
