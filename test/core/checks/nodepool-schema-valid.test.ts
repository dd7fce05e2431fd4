import { describe, expect, it } from 'vitest';
import { type FindingDraft, forEachNodePool } from '../../../lambda/core/check.js';
import { nodePoolSchemaValid } from '../../../lambda/core/checks/nodepool-schema-valid.js';
import { emptyInventory, type NodePoolEntry } from '../../../lambda/core/inventory.js';
import { parseNodePool } from '../../../lambda/core/schema.js';
import { aKarpenterVersion } from '../../support/builders.js';

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
    'value longer than 63',
    { template: { requirements: [req('team', 'In', ['a'.repeat(64)])] } },
    `${R0}.values[0]`,
    'max-length',
    'may not be longer than 63',
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
        'karpenter.sh/v1beta1 is no longer served by Karpenter v1; migrate this NodePool to karpenter.sh/v1.',
      ],
    ]);
    expect(findings[0]?.remediation).toContain('https://karpenter.sh/docs/upgrading/v1-migration/');
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
