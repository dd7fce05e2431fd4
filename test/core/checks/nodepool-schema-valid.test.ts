import { describe, expect, it } from 'vitest';
import type { AdmissionVerdict } from '../../../lambda/core/admission/types.js';
import { type FindingDraft, forEachNodePool } from '../../../lambda/core/check.js';
import { nodePoolSchemaValid } from '../../../lambda/core/checks/nodepool-schema-valid.js';
import {
  type ClusterContext,
  emptyInventory,
  type NodePoolEntry,
} from '../../../lambda/core/inventory.js';
import { parseNodePool } from '../../../lambda/core/schema.js';
import { aKarpenterVersion } from '../../support/builders.js';
import { aControllerUnreadState, CONTROLLER_UNREAD } from '../../support/read-faults.js';

const now = new Date('2026-11-01T00:00:00Z');

type Obj = Record<string, unknown>;

/** A valid karpenter.sh/v1 NodePool; `template` overrides spec.template.spec fields. */
function aNodePool(
  overrides: { spec?: Obj; template?: Obj; labels?: Obj; apiVersion?: string } = {}
): Obj {
  return {
    apiVersion: overrides.apiVersion ?? 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general' },
    spec: {
      template: {
        ...(overrides.labels ? { metadata: { labels: overrides.labels } } : {}),
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'Exists' }],
          ...overrides.template,
        },
      },
      ...overrides.spec,
    },
  };
}

function entryOf(raw: unknown, name = 'general'): NodePoolEntry {
  return { cluster: '', name, parsed: parseNodePool(raw) };
}

function evaluateRaw(raw: unknown): readonly FindingDraft[] {
  return nodePoolSchemaValid.evaluate(emptyInventory({ nodePools: [entryOf(raw)] }), { now });
}

/** [path, rule, message] of each failing finding. */
function violations(findings: readonly FindingDraft[]): [string, string, string][] {
  return findings
    .filter((finding) => finding.status === 'fail')
    .map((finding) => [
      String(finding.evidence?.path),
      String(finding.evidence?.rule),
      finding.message.slice(String(finding.evidence?.path).length + 2),
    ]);
}

const req = (key: string, operator: string, values?: string[], minValues?: number) => ({
  key,
  operator,
  ...(values ? { values } : {}),
  ...(minValues === undefined ? {} : { minValues }),
});
const R0 = 'spec.template.spec.requirements[0]';

/** A v1beta1 NodePool as written: nodeClassRef by name only, so it does not parse as v1. */
const v1beta1Pool = {
  apiVersion: 'karpenter.sh/v1beta1',
  kind: 'NodePool',
  metadata: { name: 'legacy' },
  spec: { template: { spec: { nodeClassRef: { name: 'default' }, requirements: [] } } },
};
const legacyEntry = (version?: string): NodePoolEntry => ({
  ...entryOf(v1beta1Pool, 'legacy'),
  raw: {
    ...v1beta1Pool,
    metadata: {
      name: 'legacy',
      annotations: version ? { 'nodeclass-scanner/karpenter-version': version } : {},
    },
  },
});

// Each case breaks one CRD rule: [label, overrides, path, rule, message].
const RULES: readonly [string, Parameters<typeof aNodePool>[0], string, string, string][] = [
  // requirements: keys
  [
    'restricted kubernetes.io/hostname key',
    { template: { requirements: [req('kubernetes.io/hostname', 'In', ['node-a'])] } },
    `${R0}.key`,
    'restricted-label',
    'label "kubernetes.io/hostname" is restricted',
  ],
  [
    'restricted karpenter.sh/nodepool key',
    { template: { requirements: [req('karpenter.sh/nodepool', 'In', ['a'])] } },
    `${R0}.key`,
    'restricted-label',
    'label "karpenter.sh/nodepool" is restricted',
  ],
  [
    'restricted karpenter.sh domain',
    { template: { requirements: [req('karpenter.sh/custom', 'Exists')] } },
    `${R0}.key`,
    'restricted-domain',
    'label domain "karpenter.sh" is restricted',
  ],
  [
    'restricted subdomain of karpenter.sh',
    { template: { requirements: [req('sub.karpenter.sh/custom', 'Exists')] } },
    `${R0}.key`,
    'restricted-domain',
    'label domain "karpenter.sh" is restricted',
  ],
  [
    'restricted karpenter.k8s.aws domain',
    { template: { requirements: [req('karpenter.k8s.aws/custom', 'Exists')] } },
    `${R0}.key`,
    'restricted-domain',
    'label domain "karpenter.k8s.aws" is restricted',
  ],
  [
    'malformed key',
    { template: { requirements: [req('-bad-', 'Exists')] } },
    `${R0}.key`,
    'pattern',
    "should match '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$'",
  ],
  // requirements: operators and values
  [
    'unknown operator',
    { template: { requirements: [req('kubernetes.io/arch', 'Equals', ['amd64'])] } },
    `${R0}.operator`,
    'enum',
    'Unsupported value: "Equals": supported values: "Gte", "Lte", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
  ],
  [
    'In without values',
    { template: { requirements: [req('kubernetes.io/arch', 'In', [])] } },
    R0,
    'in-has-values',
    "requirements with operator 'In' must have a value defined",
  ],
  [
    'In with values absent',
    { template: { requirements: [req('kubernetes.io/arch', 'In')] } },
    R0,
    'in-has-values',
    "requirements with operator 'In' must have a value defined",
  ],
  [
    'Gt with two values',
    {
      template: { requirements: [req('karpenter.k8s.aws/instance-generation', 'Gt', ['1', '2'])] },
    },
    R0,
    'single-integer-value',
    "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value",
  ],
  [
    'Lt with a non-integer value',
    { template: { requirements: [req('karpenter.k8s.aws/instance-cpu', 'Lt', ['1.5'])] } },
    R0,
    'single-integer-value',
    "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value",
  ],
  [
    'Gte with a word',
    { template: { requirements: [req('karpenter.k8s.aws/instance-cpu', 'Gte', ['ten'])] } },
    R0,
    'single-integer-value',
    "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value",
  ],
  [
    'minValues above the number of values',
    {
      template: {
        requirements: [req('karpenter.k8s.aws/instance-family', 'In', ['m5', 'c5'], 3)],
      },
    },
    R0,
    'min-values',
    "requirements with 'minValues' must have at least that many values specified in the 'values' field",
  ],
  [
    'minValues of 0',
    { template: { requirements: [req('karpenter.k8s.aws/instance-family', 'Exists', [], 0)] } },
    `${R0}.minValues`,
    'minimum',
    'should be greater than or equal to 1',
  ],
  [
    'minValues above 50',
    { template: { requirements: [req('karpenter.k8s.aws/instance-family', 'Exists', [], 51)] } },
    `${R0}.minValues`,
    'maximum',
    'should be less than or equal to 50',
  ],
  [
    'Exists with values (admitted, low)',
    { template: { requirements: [req('kubernetes.io/arch', 'Exists', ['arm64'])] } },
    `${R0}.values`,
    'values-ignored',
    'operator Exists takes no values; the API server admits them but they restrict nothing (did you mean In or NotIn?).',
  ],
  // template labels
  [
    'restricted template label',
    { labels: { 'kubernetes.io/hostname': 'x' } },
    'spec.template.metadata.labels.kubernetes.io/hostname',
    'restricted-label',
    'label "kubernetes.io/hostname" is restricted',
  ],
  [
    'invalid template label value',
    { labels: { team: 'a b' } },
    'spec.template.metadata.labels.team',
    'pattern',
    "should match '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$'",
  ],
  // nodeClassRef
  [
    'empty nodeClassRef name',
    { template: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: '' } } },
    'spec.template.spec.nodeClassRef.name',
    'not-empty',
    'name may not be empty',
  ],
  [
    'empty nodeClassRef kind',
    { template: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: '', name: 'default' } } },
    'spec.template.spec.nodeClassRef.kind',
    'not-empty',
    'kind may not be empty',
  ],
  [
    'nodeClassRef group with a version',
    {
      template: {
        nodeClassRef: { group: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', name: 'default' },
      },
    },
    'spec.template.spec.nodeClassRef.group',
    'pattern',
    "should match '^[^/]*$'",
  ],
  // durations
  [
    'expireAfter in days',
    { template: { expireAfter: '30d' } },
    'spec.template.spec.expireAfter',
    'pattern',
    "should match '^(([0-9]+(s|m|h))+|Never)$'",
  ],
  [
    'terminationGracePeriod Never',
    { template: { terminationGracePeriod: 'Never' } },
    'spec.template.spec.terminationGracePeriod',
    'pattern',
    "should match '^([0-9]+(s|m|h))+$'",
  ],
  [
    'consolidateAfter missing under disruption',
    { spec: { disruption: { consolidationPolicy: 'WhenEmpty' } } },
    'spec.disruption.consolidateAfter',
    'required',
    'Required value',
  ],
  [
    'consolidateAfter malformed',
    { spec: { disruption: { consolidateAfter: '1 minute' } } },
    'spec.disruption.consolidateAfter',
    'pattern',
    "should match '^(([0-9]+(s|m|h))+|Never)$'",
  ],
  [
    'unknown consolidationPolicy',
    { spec: { disruption: { consolidateAfter: '0s', consolidationPolicy: 'WhenUnderutilized' } } },
    'spec.disruption.consolidationPolicy',
    'enum',
    'Unsupported value: "WhenUnderutilized": supported values: "WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"',
  ],
  // budgets
  [
    'budget nodes above 100%',
    { spec: { disruption: { consolidateAfter: '0s', budgets: [{ nodes: '110%' }] } } },
    'spec.disruption.budgets[0].nodes',
    'pattern',
    "should match '^((100|[0-9]{1,2})%|[0-9]+)$'",
  ],
  [
    'budget nodes as a YAML number',
    { spec: { disruption: { consolidateAfter: '0s', budgets: [{ nodes: 5 }] } } },
    'spec.disruption.budgets[0].nodes',
    'type',
    'must be of type string: quote it ("5") or use a percentage such as "10%"',
  ],
  [
    'budget schedule without duration',
    {
      spec: {
        disruption: { consolidateAfter: '0s', budgets: [{ nodes: '0', schedule: '@daily' }] },
      },
    },
    'spec.disruption.budgets[0]',
    'schedule-with-duration',
    "'schedule' must be set with 'duration'",
  ],
  [
    'budget duration in seconds',
    {
      spec: {
        disruption: {
          consolidateAfter: '0s',
          budgets: [{ nodes: '0', schedule: '@daily', duration: '30s' }],
        },
      },
    },
    'spec.disruption.budgets[0].duration',
    'pattern',
    "should match '^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$'",
  ],
  [
    'budget schedule with four fields',
    {
      spec: {
        disruption: {
          consolidateAfter: '0s',
          budgets: [{ nodes: '0', schedule: '0 9 * *', duration: '8h' }],
        },
      },
    },
    'spec.disruption.budgets[0].schedule',
    'pattern',
    "should match '^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\\s(.+)\\s(.+)\\s(.+)\\s(.+))$'",
  ],
  [
    'budget reason unknown',
    {
      spec: {
        disruption: { consolidateAfter: '0s', budgets: [{ nodes: '1', reasons: ['Expired'] }] },
      },
    },
    'spec.disruption.budgets[0].reasons[0]',
    'enum',
    'Unsupported value: "Expired": supported values: "Underutilized", "Empty", "Drifted"',
  ],
  [
    'budget reasons repeated',
    {
      spec: {
        disruption: {
          consolidateAfter: '0s',
          budgets: [{ nodes: '1', reasons: ['Empty', 'Empty'] }],
        },
      },
    },
    'spec.disruption.budgets[0].reasons',
    'unique',
    'Duplicate value: "Empty"',
  ],
  // limits, weight, static NodePools
  [
    'limit not a quantity',
    { spec: { limits: { cpu: '1000 cores' } } },
    'spec.limits.cpu',
    'pattern',
    "should match '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$'",
  ],
  [
    'weight 0',
    { spec: { weight: 0 } },
    'spec.weight',
    'minimum',
    'should be greater than or equal to 1',
  ],
  [
    'weight above 100',
    { spec: { weight: 101 } },
    'spec.weight',
    'maximum',
    'should be less than or equal to 100',
  ],
  [
    'static NodePool with a cpu limit',
    { spec: { replicas: 3, limits: { cpu: '100' } } },
    'spec',
    'static-limits',
    "only 'limits.nodes' is supported on static NodePools",
  ],
  [
    'static NodePool with a weight',
    { spec: { replicas: 3, weight: 10 } },
    'spec',
    'static-weight',
    "'weight' is not supported on static NodePools",
  ],
  // taints
  [
    'taint with an unknown effect',
    { template: { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoLaunch' }] } },
    'spec.template.spec.taints[0].effect',
    'enum',
    'Unsupported value: "NoLaunch": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
  ],
  [
    'startup taint with an empty key',
    { template: { startupTaints: [{ key: '', effect: 'NoSchedule' }] } },
    'spec.template.spec.startupTaints[0].key',
    'min-length',
    'should be at least 1 chars long',
  ],
];

describe('nodepool-schema-valid', () => {
  it('passes a valid NodePool with one pass finding', () => {
    const findings = evaluateRaw(aNodePool());
    expect(findings.map((finding) => finding.status)).toEqual(['pass']);
    expect(findings[0]?.resource).toMatchObject({ kind: 'NodePool', name: 'general' });
  });

  it('passes a NodePool that uses every optional field correctly', () => {
    const findings = evaluateRaw(
      aNodePool({
        labels: { team: 'platform', 'karpenter.sh/capacity-type': 'spot' },
        template: {
          requirements: [
            req('kubernetes.io/arch', 'In', ['amd64', 'arm64']),
            req('karpenter.k8s.aws/instance-family', 'In', ['m5', 'm6i', 'c5'], 2),
            req('karpenter.k8s.aws/instance-generation', 'Gt', ['4']),
            req('karpenter.k8s.aws/instance-cpu', 'Lte', ['64']),
            req('karpenter.k8s.aws/instance-hypervisor', 'NotIn', ['xen']),
            req('topology.kubernetes.io/zone', 'DoesNotExist'),
            req('example.com/team', 'Exists'),
          ],
          taints: [{ key: 'example.com/dedicated', value: 'gpu', effect: 'NoSchedule' }],
          startupTaints: [{ key: 'node.cilium.io/agent-not-ready', effect: 'NoExecute' }],
          expireAfter: 'Never',
          terminationGracePeriod: '48h30m',
        },
        spec: {
          disruption: {
            consolidationPolicy: 'WhenEmptyOrUnderutilized',
            consolidateAfter: '1m30s',
            budgets: [
              { nodes: '10%' },
              { nodes: '0', schedule: '0 9 * * mon-fri', duration: '8h', reasons: ['Drifted'] },
              { nodes: '5', schedule: '@daily', duration: '1h30m' },
            ],
          },
          limits: { cpu: 1000, memory: '1000Gi' },
          weight: 100,
        },
      })
    );
    expect(violations(findings)).toEqual([]);
    expect(findings.map((finding) => finding.status)).toEqual(['pass']);
  });

  it.each(RULES)('fails for %s', (_label, overrides, path, rule, message) => {
    // Act
    const findings = evaluateRaw(aNodePool(overrides));

    // Assess
    expect(violations(findings)).toEqual([[path, rule, message]]);
    expect(findings[0]?.location).toEqual({ path });
    expect(findings[0]?.discriminator).toBe(`${path}#${rule}`);
    expect(findings[0]?.severity).toBe(rule === 'values-ignored' ? 'low' : undefined);
  });

  // Karpenter's own admission cases (pkg/apis/v1/nodepool_validation_cel_test.go): its well-known
  // labels are allowed as requirement keys and template labels.
  it.each([
    'topology.kubernetes.io/zone',
    'topology.k8s.aws/zone-id',
    'node.kubernetes.io/instance-type',
    'kubernetes.io/arch',
    'kubernetes.io/os',
    'karpenter.sh/capacity-type',
    'karpenter.k8s.aws/instance-tenancy',
    'karpenter.k8s.aws/instance-category',
    'karpenter.k8s.aws/instance-gpu-name',
    'karpenter.k8s.aws/capacity-reservation-id',
    'karpenter.k8s.aws/ec2nodeclass',
  ])('allows the well-known label %s', (label) => {
    const findings = evaluateRaw(
      aNodePool({
        labels: { [label]: 'test' },
        template: { requirements: [req(label, 'In', ['test'])] },
      })
    );
    expect(violations(findings)).toEqual([]);
  });

  it('reports a v1beta1 NodePool as not served, with migration remediation', () => {
    const findings = evaluateRaw(aNodePool({ apiVersion: 'karpenter.sh/v1beta1' }));
    expect(violations(findings)).toEqual([
      [
        'apiVersion',
        'api-version',
        'karpenter.sh/v1beta1 is no longer served since Karpenter v1.1.0; migrate this NodePool to karpenter.sh/v1.',
      ],
    ]);
    expect(findings[0]?.remediation).toContain('https://karpenter.sh/docs/upgrading/v1-migration/');
  });

  it('reports a v1beta1 NodePool that does not parse as v1 by its apiVersion, not its fields', () => {
    const findings = nodePoolSchemaValid.evaluate(emptyInventory({ nodePools: [legacyEntry()] }), {
      now,
    });
    expect(violations(findings).map(([path, rule]) => `${path}#${rule}`)).toEqual([
      'apiVersion#api-version',
    ]);
  });

  it('at v1.0.x: a notice, still served through the conversion webhook but removed in v1.1.0', () => {
    const findings = nodePoolSchemaValid.evaluate(
      emptyInventory({ nodePools: [legacyEntry('1.0.14')] }),
      { now }
    );
    expect(findings.map((finding) => [finding.status, finding.evidence?.rule])).toEqual([
      ['notice', 'api-version-deprecated'],
    ]);
    expect(findings[0]?.message).toContain(
      'karpenter.sh/v1beta1 is still served by Karpenter v1.0.14'
    );
    expect(findings[0]?.message).toContain('migrate this NodePool before upgrading');
  });

  it('admits a NodePool named by metadata.generateName alone', () => {
    const pool = aNodePool();
    pool.metadata = { generateName: 'general-' };
    expect(evaluateRaw(pool).map((finding) => finding.status)).toEqual(['pass']);
  });

  it('refuses a NodePool with neither name nor generateName', () => {
    const pool = aNodePool();
    pool.metadata = {};
    expect(violations(evaluateRaw(pool))).toEqual([
      ['metadata.name', 'type', 'Required value: name or generateName is required'],
    ]);
  });

  it('names what and where when the NodePool does not parse', () => {
    const raw = aNodePool({ template: { nodeClassRef: { name: 'default' }, requirements: 'all' } });
    const findings = evaluateRaw(raw);
    expect(violations(findings).map(([path]) => path)).toEqual([
      'spec.template.spec.nodeClassRef.group',
      'spec.template.spec.nodeClassRef.kind',
      'spec.template.spec.requirements',
    ]);
    expect(findings[0]?.message).toContain('Required value');
    expect(findings.every((finding) => finding.resource.kind === 'NodePool')).toBe(true);
  });

  it('reports each violation as its own finding', () => {
    const findings = evaluateRaw(
      aNodePool({
        template: { requirements: [req('kubernetes.io/hostname', 'In', [])], expireAfter: '1d' },
        spec: { weight: 0 },
      })
    );
    expect(violations(findings).map(([path, rule]) => `${path}#${rule}`)).toEqual([
      `${R0}.key#restricted-label`,
      `${R0}#in-has-values`,
      'spec.template.spec.expireAfter#pattern',
      'spec.weight#minimum',
    ]);
  });
});

describe('forEachNodePool', () => {
  it('evaluates parsed v1 NodePools and gives the others one error finding each', () => {
    // Arrange
    const inventory = emptyInventory({
      nodePools: [
        entryOf(aNodePool(), 'good'),
        entryOf(aNodePool({ template: { requirements: undefined } }), 'broken'),
        entryOf(aNodePool({ apiVersion: 'karpenter.sh/v1beta1' }), 'legacy'),
      ],
    });
    const seen: string[] = [];

    // Act
    const drafts = forEachNodePool(inventory, (nodePool, target) => {
      seen.push(`${target.resource.name}:${nodePool.spec.template.spec.nodeClassRef.name}`);
      return [];
    });

    // Assess
    expect(seen).toEqual(['good:default']);
    expect(drafts.map((draft) => [draft.resource.name, draft.status, draft.causedBy])).toEqual([
      ['broken', 'error', { checkId: 'nodepool-schema-valid' }],
      ['legacy', 'error', { checkId: 'nodepool-schema-valid' }],
    ]);
    expect(drafts[0]?.evidence?.issues).toEqual([
      { path: 'spec.template.spec.requirements', message: expect.any(String) },
    ]);
  });
});

describe('nodepool-schema-valid: fields the karpenter.sh/v1 CRD does not have', () => {
  it('reports a v1beta1 kubelet left on a v1 NodePool, with where it moved, and nothing on the healthy one', () => {
    // Prepare
    const healthy = aNodePool();
    const broken = aNodePool({ template: { kubelet: { maxPods: 110 } } });

    // Act
    const findings = [...evaluateRaw(healthy), ...evaluateRaw(broken)];

    // Assess
    expect(findings.map((finding) => finding.status)).toEqual(['pass', 'fail']);
    const [, unknown] = findings;
    expect(unknown?.evidence).toMatchObject({
      path: 'spec.template.spec.kubelet',
      rule: 'unknown-field',
    });
    expect(unknown?.severity).toBe('high');
    expect(unknown?.discriminator).toBe('spec.template.spec.kubelet#unknown-field');
    expect(unknown?.location).toEqual({ path: 'spec.template.spec.kubelet' });
    expect(unknown?.message).toContain('kubelet settings moved to the EC2NodeClass in v1');
    expect(unknown?.message).toContain('kubectl apply and create reject the whole object');
    expect(unknown?.message).toContain("the API server's default, Warn");
    expect(unknown?.remediation).toContain('spec.kubelet of the EC2NodeClass');
  });

  it.each([
    [
      { spec: { disruption: { consolidateAfter: '1m', expireAfter: '720h' } } },
      'spec.disruption.expireAfter',
      'spec.template.spec.expireAfter',
    ],
    [
      {
        template: {
          nodeClassRef: {
            apiVersion: 'karpenter.k8s.aws/v1',
            kind: 'EC2NodeClass',
            name: 'default',
            group: 'karpenter.k8s.aws',
          },
        },
      },
      'spec.template.spec.nodeClassRef.apiVersion',
      'group: karpenter.k8s.aws',
    ],
    [{ spec: { weigth: 10 } }, 'spec.weigth', 'did you mean "weight"?'],
    [
      {
        template: {
          requirements: [{ ...req('kubernetes.io/arch', 'In', ['amd64']), minValue: 1 }],
        },
      },
      `${R0}.minValue`,
      'did you mean "minValues"?',
    ],
  ])('reports %j at %s (%s)', (overrides, path, hint) => {
    const findings = evaluateRaw(aNodePool(overrides));
    expect(violations(findings).map(([p, rule]) => `${p}#${rule}`)).toEqual([
      `${path}#unknown-field`,
    ]);
    expect(`${findings[0]?.message} ${findings[0]?.remediation}`).toContain(hint);
  });

  it('does not look inside maps or report the v1beta1 fields of a v1beta1 object twice', () => {
    const withLabels = aNodePool({
      labels: { 'example.com/anything': 'x' },
      spec: { limits: { 'nvidia.com/gpu': 4 } },
    });
    expect(violations(evaluateRaw(withLabels))).toEqual([]);
    const legacy = aNodePool({
      apiVersion: 'karpenter.sh/v1beta1',
      template: { kubelet: { maxPods: 1 } },
    });
    expect(violations(evaluateRaw(legacy)).map(([, rule]) => rule)).toEqual(['api-version']);
  });

  it('reports spec.replicas as unknown to a Karpenter older than v1.8.0 (static NodePools)', () => {
    // Prepare
    const pool = aNodePool({ spec: { replicas: 2, limits: { nodes: 5 } } });
    const inventoryOn = (version: string) =>
      emptyInventory({
        clusters: [{ name: '', partition: 'aws', karpenterVersion: aKarpenterVersion(version) }],
        nodePools: [entryOf(pool)],
      });

    // Act
    const old = nodePoolSchemaValid.evaluate(inventoryOn('1.7.2'), { now });
    const current = nodePoolSchemaValid.evaluate(inventoryOn('1.8.0'), { now });

    // Assess
    expect(violations(old).map(([path, rule]) => `${path}#${rule}`)).toEqual([
      'spec.replicas#unknown-field',
    ]);
    expect(old[0]?.message).toContain('added in Karpenter v1.8.0: the cluster stored it');
    expect(old[0]?.evidence).toMatchObject({ since: '1.8.0' });
    expect(old[0]?.remediation).toContain('Upgrade Karpenter');
    expect(violations(current)).toEqual([]);
  });
});

/** The NodePool evaluated with the cluster at Karpenter `version` (unknown when undefined). */
function evaluateOn(version: string | undefined, raw: unknown): readonly FindingDraft[] {
  return nodePoolSchemaValid.evaluate(
    emptyInventory({
      clusters: [
        {
          name: '',
          partition: 'aws',
          ...(version ? { karpenterVersion: aKarpenterVersion(version) } : {}),
        },
      ],
      nodePools: [entryOf(raw)],
    }),
    { now }
  );
}

const pathRules = (findings: readonly FindingDraft[]) =>
  violations(findings).map(([path, rule]) => `${path}#${rule}`);
const K0 = `${R0}.key`;
const LABELS = 'spec.template.metadata.labels';
const budget = (reasons: string[]) => ({
  disruption: { consolidateAfter: '1m', budgets: [{ nodes: '10%', reasons }] },
});

// Each rule that changed between releases, probed on the last release without it and the first
// with it: [label, NodePool, last release before, path#rule there, first release, path#rule there].
const PROBES: readonly [string, Obj, string, string[], string, string[]][] = [
  [
    'an empty nodeClassRef name',
    aNodePool({
      template: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: '' } },
    }),
    '1.0.14',
    [],
    '1.1.0',
    ['spec.template.spec.nodeClassRef.name#not-empty'],
  ],
  [
    'the label karpenter.k8s.aws/ec2nodeclass',
    aNodePool({ template: { requirements: [req('karpenter.k8s.aws/ec2nodeclass', 'Exists')] } }),
    '1.0.14',
    [`${K0}#restricted-domain`],
    '1.1.0',
    [],
  ],
  [
    'consolidateAfter starting with a duration',
    aNodePool({ spec: { disruption: { consolidateAfter: '10sfoo' } } }),
    '1.3.8',
    [],
    '1.4.0',
    ['spec.disruption.consolidateAfter#pattern'],
  ],
  [
    'expireAfter ending with Never',
    aNodePool({ template: { expireAfter: 'xNever' } }),
    '1.3.8',
    [],
    '1.4.0',
    ['spec.template.spec.expireAfter#pattern'],
  ],
  [
    'weight on a static NodePool',
    aNodePool({ spec: { replicas: 2, weight: 10 } }),
    '1.7.6',
    ['spec.replicas#unknown-field'],
    '1.8.0',
    ['spec#static-weight'],
  ],
  [
    'a budget with 51 reasons',
    aNodePool({ spec: budget(Array.from({ length: 51 }, () => 'Empty')) }),
    '1.7.6',
    [],
    '1.8.0',
    ['spec.disruption.budgets[0].reasons#max-items'],
  ],
  [
    'the operator Gte',
    aNodePool({
      template: { requirements: [req('karpenter.k8s.aws/instance-cpu', 'Gte', ['4'])] },
    }),
    '1.8.8',
    [`${R0}.operator#enum`],
    '1.9.0',
    [],
  ],
  [
    'a kubernetes.io requirement key',
    aNodePool({ template: { requirements: [req('kubernetes.io/custom', 'Exists')] } }),
    '1.8.8',
    [`${K0}#restricted-domain`],
    '1.9.0',
    [],
  ],
  [
    'a k8s.io template label',
    aNodePool({ labels: { 'example.k8s.io/team': 'a' } }),
    '1.8.8',
    [`${LABELS}.example.k8s.io/team#restricted-domain-k8s-io`],
    '1.9.0',
    [],
  ],
  [
    'the label karpenter.k8s.aws/instance-tenancy',
    aNodePool({ labels: { 'karpenter.k8s.aws/instance-tenancy': 'default' } }),
    '1.8.8',
    [`${LABELS}.karpenter.k8s.aws/instance-tenancy#restricted-domain`],
    '1.9.0',
    [],
  ],
  [
    'the label karpenter.k8s.aws/placement-group-id',
    aNodePool({
      template: { requirements: [req('karpenter.k8s.aws/placement-group-id', 'Exists')] },
    }),
    '1.10.2',
    [`${K0}#restricted-domain`],
    '1.11.0',
    [],
  ],
  [
    'duplicate budget reasons',
    aNodePool({ spec: budget(['Empty', 'Empty']) }),
    '1.12.2',
    [],
    '1.13.0',
    ['spec.disruption.budgets[0].reasons#unique'],
  ],
  [
    'consolidationPolicy Balanced',
    aNodePool({
      spec: { disruption: { consolidateAfter: '1m', consolidationPolicy: 'Balanced' } },
    }),
    '1.13.1',
    ['spec.disruption.consolidationPolicy#enum'],
    '1.14.0',
    [],
  ],
  [
    // Only Karpenter's main branch allows it: a version newer than v1.14.1 takes those rules.
    'the label karpenter.k8s.aws/nitro-sandbox',
    aNodePool({ template: { requirements: [req('karpenter.k8s.aws/nitro-sandbox', 'Exists')] } }),
    '1.14.1',
    [`${K0}#restricted-domain`],
    '1.15.0',
    [],
  ],
];

describe('nodepool-schema-valid: the built-in rules of each release', () => {
  it.each(PROBES)(
    '%s: before and from its release',
    (_label, pool, before, atBefore, from, atFrom) => {
      expect(pathRules(evaluateOn(before, pool))).toEqual(atBefore);
      expect(pathRules(evaluateOn(from, pool))).toEqual(atFrom);
    }
  );

  it.each([
    'node.kubernetes.io/instance-type',
    'topology.kubernetes.io/zone',
    'kubernetes.io/arch',
    'node-restriction.kubernetes.io/team',
    'kops.k8s.io/instancegroup',
    'example.com/team',
  ])('allows %s before v1.9.0 too (the kubernetes.io and k8s.io exceptions)', (key) => {
    const pool = aNodePool({
      labels: { [key]: 'a' },
      template: { requirements: [req(key, 'Exists')] },
    });
    expect(pathRules(evaluateOn('1.8.8', pool))).toEqual([]);
  });

  it('rejects kubernetes.io/hostname under both rules before v1.9.0', () => {
    const pool = aNodePool({
      template: { requirements: [req('kubernetes.io/hostname', 'Exists')] },
    });
    expect(violations(evaluateOn('1.8.8', pool))).toEqual([
      [K0, 'restricted-domain', 'label domain "kubernetes.io" is restricted'],
      [K0, 'restricted-label', 'label "kubernetes.io/hostname" is restricted'],
    ]);
  });

  it("words the Gt/Lt rule as each release's CRD does", () => {
    const pool = aNodePool({ template: { requirements: [req('example.com/size', 'Gt', ['a'])] } });
    expect(violations(evaluateOn('1.8.8', pool))[0]?.[2]).toBe(
      "requirements operator 'Gt' or 'Lt' must have a single positive integer value"
    );
    expect(violations(evaluateOn('1.9.0', pool))[0]?.[2]).toBe(
      "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value"
    );
  });

  it('rejects nitro-sandbox with the version unknown: the default is the newest release, never main', () => {
    const pool = aNodePool({ labels: { 'karpenter.k8s.aws/nitro-sandbox': 'true' } });
    const findings = evaluateOn(undefined, pool);
    expect(pathRules(findings)).toEqual([
      `${LABELS}.karpenter.k8s.aws/nitro-sandbox#restricted-domain`,
    ]);
    expect(String(findings[0]?.evidence?.rules)).toContain('newest release, v1.14.1');
  });

  it("takes the NodePool's own nodeclass-scanner/karpenter-version annotation over the cluster's", () => {
    const pool = aNodePool({
      spec: { disruption: { consolidateAfter: '1m', consolidationPolicy: 'Balanced' } },
    });
    const annotated = {
      ...pool,
      metadata: {
        name: 'general',
        annotations: { 'nodeclass-scanner/karpenter-version': '1.13.1' },
      },
    };
    expect(pathRules(evaluateOn('1.14.1', annotated))).toEqual([
      'spec.disruption.consolidationPolicy#enum',
    ]);
    expect(evaluateOn('1.14.1', pool).map((finding) => finding.evidence?.rulesRelease)).toEqual([
      'Karpenter v1.14.1',
    ]);
  });
});

describe('nodepool-schema-valid: the installed CRD decides when the scan has it', () => {
  const verdict = (overrides: Partial<AdmissionVerdict>): AdmissionVerdict => ({
    crd: 'nodepools.karpenter.sh from crds/nodepools.yaml',
    version: 'v1',
    violations: [],
    pruned: [],
    defaulted: {},
    openPaths: [],
    skippedTransitionRules: 3,
    ...overrides,
  });
  const withAdmission = (raw: unknown, admission: AdmissionVerdict) =>
    nodePoolSchemaValid.evaluate(emptyInventory({ nodePools: [{ ...entryOf(raw), admission }] }), {
      now,
    });

  it("reports the CRD's violations and pruned fields instead of the built-in rules", () => {
    // The built-in rules of the newest release would reject nitro-sandbox; this CRD allows it.
    const pool = aNodePool({ labels: { 'karpenter.k8s.aws/nitro-sandbox': 'true' } });
    const findings = withAdmission(
      pool,
      verdict({
        violations: [
          { path: 'spec.weight', rule: 'maximum', message: 'should be less than or equal to 100' },
        ],
        pruned: ['spec.template.spec.kubelet'],
      })
    );
    expect(pathRules(findings)).toEqual([
      'spec.weight#maximum',
      'spec.template.spec.kubelet#unknown-field',
    ]);
    expect(findings[0]?.evidence).toMatchObject({
      crd: 'nodepools.karpenter.sh from crds/nodepools.yaml',
    });
  });

  it("with a v1.0.x CRD serving v1beta1: the CRD's v1beta1 verdict, and the notice", () => {
    const findings = nodePoolSchemaValid.evaluate(
      emptyInventory({
        nodePools: [
          { ...entryOf(v1beta1Pool), raw: v1beta1Pool, admission: verdict({ version: 'v1beta1' }) },
        ],
      }),
      { now }
    );
    expect(findings.map((finding) => [finding.status, finding.evidence?.rule])).toEqual([
      ['notice', 'api-version-deprecated'],
    ]);
    expect(findings[0]?.message).toContain(
      'still served by the installed CRD nodepools.karpenter.sh from crds/nodepools.yaml'
    );
  });

  it('passes what the CRD admits and says which CRD decided', () => {
    const findings = withAdmission(aNodePool(), verdict({}));
    expect(findings.map((finding) => finding.status)).toEqual(['pass']);
    expect(findings[0]?.message).toContain(
      'the installed CRD admits it (3 transition rules on oldSelf skipped'
    );
    expect(findings[0]?.evidence?.rules).toContain(
      'nodepools.karpenter.sh from crds/nodepools.yaml'
    );
  });
});

describe('nodepool-schema-valid: built-in rules as the API server applies them', () => {
  it('admits any requirement value: the CRD puts maxLength and pattern on the values array, where they do not apply', () => {
    const pool = aNodePool({
      template: { requirements: [req('team', 'In', ['a b', 'v'.repeat(64), '+1'])] },
    });
    expect(pathRules(evaluateOn('1.14.1', pool))).toEqual([]);
  });

  it.each([
    ['-0', []],
    ['007', []],
    ['9223372036854775807', []],
    ['9223372036854775808', [`${R0}#single-integer-value`]],
    ['1.5', [`${R0}#single-integer-value`]],
  ])('reads a Gt value %s as CEL int() does (Go strconv.ParseInt)', (value, expected) => {
    const pool = aNodePool({
      template: { requirements: [req('example.com/size', 'Gt', [value])] },
    });
    expect(pathRules(evaluateOn('1.14.1', pool))).toEqual(expected);
  });

  it('refuses a taint timeAdded that is not a date-time, and admits one that is', () => {
    const taint = (timeAdded: string) =>
      aNodePool({ template: { taints: [{ key: 'a', effect: 'NoSchedule', timeAdded }] } });
    expect(violations(evaluateOn('1.14.1', taint('yesterday')))).toEqual([
      [
        'spec.template.spec.taints[0].timeAdded',
        'format',
        'must be of type date-time: "yesterday"',
      ],
    ]);
    expect(pathRules(evaluateOn('1.14.1', taint('2024-01-01T10:00:00Z')))).toEqual([]);
  });

  it('matches a budget schedule with RE2 semantics: \\s is ASCII whitespace only', () => {
    const schedule = (value: string) =>
      aNodePool({
        spec: {
          disruption: {
            consolidateAfter: '0s',
            budgets: [{ nodes: '1', schedule: value, duration: '10m' }],
          },
        },
      });
    expect(pathRules(evaluateOn('1.14.1', schedule('* * * *\t*')))).toEqual([]);
    for (const space of ['\u00a0', '\u000b']) {
      expect(pathRules(evaluateOn('1.14.1', schedule(`* * * *${space}*`)))).toEqual([
        'spec.disruption.budgets[0].schedule#pattern',
      ]);
    }
  });

  it('refuses a metadata.name that is not a DNS subdomain, as for every custom resource', () => {
    const pool = { ...aNodePool(), metadata: { name: 'General_Pool' } };
    expect(violations(evaluateOn('1.14.1', pool))).toEqual([
      [
        'metadata.name',
        'metadata-name',
        expect.stringContaining('Invalid value: "General_Pool": a lowercase RFC 1123 subdomain'),
      ],
    ]);
  });

  it('treats a declared field set to null as absent, as the API server decodes it', () => {
    const pool = aNodePool({ spec: { disruption: null, weight: null } });
    expect(pathRules(evaluateOn('1.14.1', pool))).toEqual([]);
  });
});

describe('nodepool-schema-valid: the controller Deployment could not be read', () => {
  const controllerUnread = aControllerUnreadState();
  /** Refused by the rules of every release so far: the verdict of the newest one is a fail. */
  const nitroSandbox = aNodePool({ labels: { 'karpenter.k8s.aws/nitro-sandbox': 'true' } });
  const evaluateIn = (cluster: Partial<ClusterContext>, entry: NodePoolEntry) =>
    nodePoolSchemaValid.evaluate(
      emptyInventory({
        clusters: [{ name: 'prod', partition: 'aws', ...cluster }],
        nodePools: [{ ...entry, cluster: 'prod' }],
      }),
      { now }
    );

  it("reports an error with a read fault instead of judging by the newest release's rules", () => {
    const findings = evaluateIn({ state: controllerUnread }, entryOf(nitroSandbox));
    expect(findings.map((finding) => finding.status)).toEqual(['error']);
    expect(findings[0]?.readFault).toEqual(CONTROLLER_UNREAD);
    expect(findings[0]?.causedBy).toEqual({
      checkId: 'scanner-can-read-cluster',
      resource: { cluster: 'prod', kind: 'Cluster', name: 'prod' },
    });
  });

  it('still reports the rules every release shares (metadata.name, values ignored)', () => {
    const pool = {
      ...aNodePool({ template: { requirements: [req('team', 'Exists', ['a'])] } }),
      metadata: { name: 'General_Pool' },
    };
    const findings = evaluateIn({ state: controllerUnread }, entryOf(pool, 'General_Pool'));
    expect(findings.map((finding) => [finding.status, finding.evidence?.rule])).toEqual([
      ['fail', 'metadata-name'],
      ['fail', 'values-ignored'],
      ['error', undefined],
    ]);
    expect(findings[2]?.readFault).toEqual(CONTROLLER_UNREAD);
  });

  it('judges by the version when one is given: the annotation or --karpenter-version', () => {
    const annotated = {
      ...nitroSandbox,
      metadata: {
        name: 'general',
        annotations: { 'nodeclass-scanner/karpenter-version': '1.14.1' },
      },
    };
    for (const findings of [
      evaluateIn({ state: controllerUnread }, entryOf(annotated)),
      evaluateIn(
        { state: controllerUnread, karpenterVersion: aKarpenterVersion('1.14.1') },
        entryOf(nitroSandbox)
      ),
    ]) {
      expect(findings.map((finding) => finding.status)).toEqual(['fail']);
      expect(findings[0]?.readFault).toBeUndefined();
    }
  });

  it('keeps the installed CRD verdict, which does not depend on the version', () => {
    const admission: AdmissionVerdict = {
      crd: 'nodepools.karpenter.sh from the cluster',
      version: 'v1',
      violations: [],
      pruned: [],
      defaulted: {},
      openPaths: [],
      skippedTransitionRules: 0,
    };
    const findings = evaluateIn(
      { state: controllerUnread },
      { ...entryOf(nitroSandbox), admission }
    );
    expect(findings.map((finding) => finding.status)).toEqual(['pass']);
  });

  it("without a version in a manifest scan, judges by the newest release's rules as before", () => {
    const findings = evaluateIn({}, entryOf(nitroSandbox));
    expect(findings.map((finding) => finding.status)).toEqual(['fail']);
    expect(findings[0]?.evidence?.rulesRelease).toBeDefined();
    expect(findings[0]?.readFault).toBeUndefined();
  });
});
