import { describe, expect, it } from 'vitest';
import { REDACTED_USER_DATA as SNAPSHOT_MARKER } from '../../../lambda/adapters/world/build-world.js';
import type { AmiFamily } from '../../../lambda/core/ami-family.js';
import type { FindingDraft } from '../../../lambda/core/check.js';
import { userDataValid } from '../../../lambda/core/checks/user-data-valid.js';
import { REDACTED_USER_DATA } from '../../../lambda/core/user-data/analyze.js';
import { anInventory } from '../../support/builders.js';
import {
  aUserDataNodeClass,
  BAD_NODECONFIG_MIME,
  BROKEN_TOML,
  GOOD_USER_DATA,
  UNQUOTED_BOUNDARY_MIME,
} from '../../support/user-data-builders.js';

const now = new Date('2026-11-01T00:00:00Z');

function evaluate(objects: readonly unknown[]): readonly FindingDraft[] {
  return userDataValid.evaluate(anInventory(objects), { now });
}

/** [name, rule, severity, line] of each failing finding. */
function failures(findings: readonly FindingDraft[]): [string, string, string, unknown][] {
  return findings
    .filter((finding) => finding.status === 'fail')
    .map((finding) => [
      finding.resource.name,
      String(finding.evidence?.rule),
      String(finding.severity),
      finding.evidence?.line,
    ]);
}

function only(family: AmiFamily, userData: string | undefined, spec?: Record<string, unknown>) {
  return evaluate([aUserDataNodeClass(family, userData, spec ? { spec } : {})]);
}

const FAMILIES: readonly AmiFamily[] = [
  'AL2',
  'AL2023',
  'Bottlerocket',
  'Windows2019',
  'Windows2022',
  'Windows2025',
  'Custom',
];

describe('user-data-valid', () => {
  it.each(FAMILIES)('passes the documented %s userData', (family) => {
    const findings = only(family, GOOD_USER_DATA[family]);
    expect(findings.map((finding) => finding.status)).toEqual(['pass']);
  });

  it.each(FAMILIES.filter((family) => family !== 'Custom'))(
    'passes %s without userData (Karpenter renders its own bootstrap)',
    (family) => {
      const findings = only(family, undefined);
      expect(findings.map((finding) => [finding.status, finding.message])).toEqual([
        ['pass', `No spec.userData: Karpenter renders its own ${family} bootstrap.`],
      ]);
    }
  );

  // Each broken class beside its healthy control: only the broken one fails.
  it.each([
    ['Bottlerocket', BROKEN_TOML, 'toml-syntax', 'critical', 3],
    ['AL2', UNQUOTED_BOUNDARY_MIME, 'mime', 'critical', 2],
    ['AL2023', UNQUOTED_BOUNDARY_MIME, 'mime', 'critical', 2],
    ['AL2023', BAD_NODECONFIG_MIME, 'nodeconfig', 'critical', undefined],
    [
      'Windows2022',
      '<powershell>\nWrite-Host hi\n</powershell>\n',
      'powershell-tags',
      'critical',
      1,
    ],
    ['Custom', undefined, 'custom-without-bootstrap', 'critical', undefined],
  ] as const)('%s: fails the broken class only (%s)', (family, userData, rule, severity, line) => {
    // Prepare
    const healthy = aUserDataNodeClass(family, GOOD_USER_DATA[family], { name: 'healthy' });
    const broken = aUserDataNodeClass(family, userData, { name: 'broken' });

    // Act
    const findings = evaluate([healthy, broken]);

    // Assess
    expect(findings.find((finding) => finding.resource.name === 'healthy')?.status).toBe('pass');
    expect(failures(findings)).toEqual([['broken', rule, severity, line]]);
    const [failure] = findings.filter((finding) => finding.status === 'fail');
    expect(failure?.evidence).toMatchObject({ amiFamily: family });
    expect(failure?.location).toEqual({
      path: rule === 'custom-without-bootstrap' ? 'spec.amiFamily' : 'spec.userData',
    });
  });

  it('reports the TOML error with its line and column, and what Karpenter does about it', () => {
    const [finding] = only('Bottlerocket', BROKEN_TOML);
    expect(finding?.message).toContain('spec.userData is not valid TOML (line 3, column 15)');
    expect(finding?.message).toContain("expected '=' after the key \"cluster-domain\", found ':'");
    expect(finding?.message).toContain('cannot render the launch template');
    expect(finding?.evidence).toMatchObject({ line: 3, column: 15 });
  });

  it('reports Bottlerocket values Karpenter cannot decode into its settings types, each at its line', () => {
    // Prepare
    const userData = [
      '[settings.kubernetes]',
      'max-pods = "110"',
      'image-gc-high-threshold-percent = 85',
      '[settings.kubernetes.node-labels]',
      'team.name = "platform"',
    ].join('\n');

    // Act
    const findings = only('Bottlerocket', userData);

    // Assess
    expect(findings.map((f) => [f.evidence?.setting, f.evidence?.rule, f.evidence?.line])).toEqual([
      ['settings.kubernetes.max-pods', 'toml-type', 2],
      ['settings.kubernetes.image-gc-high-threshold-percent', 'toml-type', 3],
      ['settings.kubernetes.node-labels.team', 'toml-type', 5],
      ['settings.kubernetes.max-pods', 'toml-overridden', 2],
    ]);
    expect(findings[0]?.message).toContain('Remove the quotes.');
    expect(findings[1]?.message).toContain('Quote it: "85".');
    expect(findings[2]?.message).toContain('A key holding dots must be quoted');
    expect(findings[3]?.severity).toBe('low');
  });

  it('reports Bottlerocket settings Karpenter drops or overwrites, without failing the render', () => {
    // Prepare: containerd config outside [settings] (#5380), an unknown kubernetes setting, and
    // taints Karpenter replaces with the NodePool's.
    const userData = [
      'version = 2',
      '[settings.kubernetes]',
      'unknown-setting = "x"',
      '[settings.kubernetes.node-taints]',
      '"dedicated" = ["gpu:NoSchedule"]',
      '[settings.host-containers.admin]',
      'enabled = true',
    ].join('\n');

    // Act
    const findings = only('Bottlerocket', userData);

    // Assess
    expect(findings.map((f) => [f.evidence?.setting, f.evidence?.rule, f.severity])).toEqual([
      ['version', 'toml-dropped', 'medium'],
      ['settings.kubernetes.unknown-setting', 'toml-dropped', 'medium'],
      ['settings.kubernetes.node-taints', 'toml-overridden', 'medium'],
    ]);
  });

  it('names settings spec.kubelet overwrites in Bottlerocket userData', () => {
    const findings = only(
      'Bottlerocket',
      '[settings.kubernetes]\nkube-reserved = { cpu = "100m" }\n',
      {
        kubelet: { kubeReserved: { cpu: '200m' } },
      }
    );
    expect(findings.map((f) => [f.evidence?.setting, f.evidence?.rule])).toEqual([
      ['settings.kubernetes.kube-reserved', 'toml-overridden'],
    ]);
    expect(findings[0]?.message).toContain('spec.kubelet.kubeReserved');
  });

  it('says when Bottlerocket userData is another family’s', () => {
    const [finding] = only('Bottlerocket', GOOD_USER_DATA.AL2);
    expect(finding?.message).toContain('It is a shell script');
  });

  it.each([
    [
      'a part without the empty line after its headers',
      'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="//"\n\n--//\nContent-Type: text/x-shellscript\n#!/bin/bash\necho hi\n--//--\n',
      6,
      '"#!/bin/bash" is not a header line',
    ],
    [
      'no closing boundary',
      'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="//"\n\n--//\nContent-Type: text/x-shellscript\n\necho hi\n',
      4,
      'never ends',
    ],
    [
      'no Content-Type header',
      'MIME-Version: 1.0\n\n--//\n\necho hi\n--//--\n',
      1,
      'no Content-Type header',
    ],
    [
      'a non-multipart Content-Type',
      'Content-Type: text/x-shellscript\n\necho hi\n',
      1,
      'not multipart/*',
    ],
  ])('AL2: reports MIME Karpenter cannot parse: %s', (_label, userData, line, text) => {
    const [finding] = only('AL2', userData);
    expect(finding?.evidence).toMatchObject({ rule: 'mime', line });
    expect(finding?.message).toContain(text);
  });

  it('AL2023: reports a comment-only script, which Karpenter hands to nodeadm as an empty NodeConfig', () => {
    const findings = only('AL2023', '#!/bin/bash\n# set up later\n');
    expect(failures(findings)).toEqual([['al2023-class', 'nodeconfig', 'critical', undefined]]);
    expect(findings[0]?.message).toContain('it is empty (or only comments)');
  });

  it('AL2023: reports a NodeConfig that is not YAML, which Karpenter passes on as a shell script', () => {
    const userData =
      'apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n\tconfig: {}\n';
    const findings = only('AL2023', userData);
    expect(failures(findings)).toEqual([['al2023-class', 'nodeconfig-yaml', 'high', 5]]);
  });

  it('AL2023: reports the line of a NodeConfig part that is not YAML', () => {
    const userData = BAD_NODECONFIG_MIME.replace(
      'kind: NodeConfiguration',
      'kind: NodeConfig'
    ).replace('    config:', '   config:\n  bad: [unclosed');
    const findings = only('AL2023', userData);
    expect(failures(findings)).toEqual([['al2023-class', 'nodeconfig', 'critical', 12]]);
  });

  it('AL2023: reports a part whose transfer encoding Karpenter drops', () => {
    const userData = GOOD_USER_DATA.AL2023.replace(
      'Content-Type: text/x-shellscript; charset="us-ascii"\n',
      'Content-Type: text/x-shellscript; charset="us-ascii"\nContent-Transfer-Encoding: base64\n'
    );
    const findings = only('AL2023', userData);
    expect(failures(findings)).toEqual([['al2023-class', 'part-encoding', 'high', 4]]);
  });

  it('reports settings of another family', () => {
    expect(failures(only('AL2023', GOOD_USER_DATA.Bottlerocket))).toEqual([
      ['al2023-class', 'other-family', 'high', undefined],
    ]);
    const nodeConfig = 'apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: {}\n';
    expect(failures(only('AL2', nodeConfig))).toEqual([
      ['al2-class', 'other-family', 'high', undefined],
    ]);
  });

  it('Custom: reports userData that never registers the karpenter.sh/unregistered taint (medium)', () => {
    expect(failures(only('Custom', '#!/bin/bash\n/etc/eks/bootstrap.sh my-cluster\n'))).toEqual([
      ['custom-class', 'custom-unregistered-taint', 'medium', undefined],
    ]);
  });

  it('does not evaluate userData redacted by `snapshot` (the marker is the adapter’s)', () => {
    // Prepare
    expect(REDACTED_USER_DATA).toBe(SNAPSHOT_MARKER);
    const objects = FAMILIES.map((family) =>
      aUserDataNodeClass(family, REDACTED_USER_DATA, { name: family })
    );

    // Act
    const findings = evaluate(objects);

    // Assess
    expect(new Set(findings.map((finding) => finding.status))).toEqual(new Set(['not-applicable']));
    expect(findings[0]?.message).toContain('redacted');
  });

  it('uses the alias family when amiFamily is not set, and amiFamily when it is', () => {
    // An al2023 alias with amiFamily Custom renders as Custom: the TOML is passed through.
    const findings = only('AL2023', BROKEN_TOML, { amiFamily: 'Custom' });
    expect(failures(findings)).toEqual([
      ['al2023-class', 'custom-unregistered-taint', 'medium', undefined],
    ]);
  });
});
