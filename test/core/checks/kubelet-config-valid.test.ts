import { describe, expect, it } from 'vitest';
import type { AdmissionVerdict } from '../../../lambda/core/admission/types.js';
import type { FindingDraft } from '../../../lambda/core/check.js';
import { kubeletConfigValid } from '../../../lambda/core/checks/kubelet-config-valid.js';
import { nodeClassSchemaValid } from '../../../lambda/core/checks/nodeclass-schema-valid.js';
import { type ClusterContext, emptyInventory } from '../../../lambda/core/inventory.js';
import {
  aKarpenterVersion,
  aNodeClassEntry,
  aNodeClassObject,
  anInventory,
} from '../../support/builders.js';
import { aControllerUnreadState, CONTROLLER_UNREAD } from '../../support/read-faults.js';

const now = new Date('2026-11-01T00:00:00Z');

// The controller's rules apply where the CRD leaves spec.kubelet open: Karpenter's main branch,
// which the scanner applies to a version newer than the newest release it knows (v1.14.1).
const AFTER_NEWEST = { annotations: { 'nodeclass-scanner/karpenter-version': '1.15.0' } };

function evaluate(
  kubelet: Record<string, unknown> | undefined,
  spec: Record<string, unknown> = {}
): readonly FindingDraft[] {
  const raw = aNodeClassObject({
    metadata: AFTER_NEWEST,
    spec: { ...spec, ...(kubelet ? { kubelet } : {}) },
  });
  return kubeletConfigValid.evaluate(anInventory([raw]), { now });
}

/** [path, rule, message without the shared suffix] of each failing finding. */
function violations(findings: readonly FindingDraft[]): [string, string, string][] {
  return findings
    .filter((finding) => finding.status === 'fail')
    .map((finding) => {
      const path = String(finding.evidence?.path);
      const message = finding.message.slice(path.length + 2);
      return [
        path,
        String(finding.evidence?.rule),
        message.slice(0, message.indexOf('. Karpenter')),
      ];
    });
}

// [label, kubelet, path, rule, message]; Karpenter's controller rejects each.
const REJECTED: readonly [string, Record<string, unknown>, string, string, string][] = [
  [
    'podsPerCore as a word',
    { podsPerCore: 'ten' },
    'spec.kubelet.podsPerCore',
    'type',
    'must be an integer',
  ],
  [
    'maxPods as an object',
    { maxPods: { value: 10 } },
    'spec.kubelet.maxPods',
    'type',
    'must be an integer or a CEL expression string',
  ],
  [
    'kubeReserved value as a number',
    { kubeReserved: { cpu: 1 } },
    'spec.kubelet.kubeReserved',
    'type',
    'must be a map of strings',
  ],
  [
    'cpuCFSQuota as a string',
    { cpuCFSQuota: 'yes' },
    'spec.kubelet.cpuCFSQuota',
    'type',
    'must be a boolean',
  ],
  [
    'registerWithTaints set',
    { registerWithTaints: [] },
    'spec.kubelet.registerWithTaints',
    'karpenter-owned',
    "can't be set, Karpenter sets it from the NodeClaim's taints so the node registers unschedulable until it's ready",
  ],
  [
    'unknown eviction signal',
    { evictionHard: { 'memory.free': '5%' } },
    'spec.kubelet.evictionHard.memory.free',
    'eviction-signal',
    '"memory.free" isn\'t a valid eviction signal, must be one of memory.available, nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree, pid.available',
  ],
  [
    'eviction percentage above 100',
    { evictionHard: { 'memory.available': '120%' } },
    'spec.kubelet.evictionHard.memory.available',
    'value',
    '"120%" must be a percentage or a resource quantity',
  ],
  [
    'negative eviction quantity',
    { evictionMinimumReclaim: { 'memory.available': '-1Gi' } },
    'spec.kubelet.evictionMinimumReclaim.memory.available',
    'value',
    '"-1Gi" can\'t be a negative resource quantity',
  ],
  [
    'grace period not a duration',
    {
      evictionSoft: { 'memory.available': '10%' },
      evictionSoftGracePeriod: { 'memory.available': '1 minute' },
    },
    'spec.kubelet.evictionSoftGracePeriod.memory.available',
    'value',
    '"1 minute" must be a duration (e.g. "30s", "2m")',
  ],
  [
    'evictionSoft without a grace period',
    { evictionSoft: { 'memory.available': '10%' } },
    'spec.kubelet.evictionSoft.memory.available',
    'eviction-soft-grace-period',
    'has no matching evictionSoftGracePeriod (the kubelet ignores the threshold)',
  ],
  [
    'grace period without evictionSoft',
    { evictionSoftGracePeriod: { 'memory.available': '1m' } },
    'spec.kubelet.evictionSoftGracePeriod.memory.available',
    'eviction-grace-period-soft',
    'has no matching evictionSoft',
  ],
  [
    'systemReserved unknown resource',
    { systemReserved: { gpu: '1' } },
    'spec.kubelet.systemReserved.gpu',
    'reservable-resource',
    '"gpu" isn\'t a reservable resource, must be one of cpu, memory, ephemeral-storage, pid',
  ],
  [
    'kubeReserved negative',
    { kubeReserved: { cpu: '-100m' } },
    'spec.kubelet.kubeReserved.cpu',
    'not-negative',
    '"-100m" can\'t be a negative resource quantity',
  ],
  [
    'imageGC threshold above 100',
    { imageGCHighThresholdPercent: 101 },
    'spec.kubelet.imageGCHighThresholdPercent',
    'range',
    '101 must be between 0 and 100',
  ],
  [
    'negative maxPods',
    { maxPods: -1 },
    'spec.kubelet.maxPods',
    'not-negative',
    "-1 can't be negative",
  ],
  [
    'imageGC high not above low',
    { imageGCHighThresholdPercent: 80, imageGCLowThresholdPercent: 80 },
    'spec.kubelet',
    'image-gc-thresholds',
    'imageGCHighThresholdPercent (80) must be greater than imageGCLowThresholdPercent (80)',
  ],
];

describe('kubelet-config-valid: the controller validates an open spec.kubelet (after v1.14.1)', () => {
  it('passes a kubelet Karpenter accepts, including a CEL maxPods and expression reservations', () => {
    const findings = evaluate({
      maxPods: 'vcpus * 10',
      podsPerCore: 10,
      kubeReserved: { cpu: '200m', memory: 'memory * 0.05' },
      systemReserved: { cpu: '200m', memory: '100Mi' },
      evictionHard: { 'memory.available': '5%', 'nodefs.available': '10Gi' },
      evictionSoft: { 'memory.available': '10%' },
      evictionSoftGracePeriod: { 'memory.available': '1m30s' },
      imageGCHighThresholdPercent: 85,
      imageGCLowThresholdPercent: 80,
      serializeImagePulls: false,
      logging: { format: 'json', flushFrequency: '5s' },
    });
    expect(findings.map((finding) => finding.status)).toEqual(['pass']);
  });

  it('says nothing about a NodeClass without kubelet settings', () => {
    expect(evaluate(undefined)).toEqual([]);
  });

  it.each(REJECTED)('fails for %s', (_label, kubelet, path, rule, message) => {
    // Act
    const findings = evaluate(kubelet);

    // Assess
    expect(violations(findings)).toEqual([[path, rule, message]]);
    expect(findings[0]?.location).toEqual({ path });
    expect(findings[0]?.message).toContain('ValidationSucceeded=False');
  });

  it('is a separate finding from nodeclass-schema-valid, which admits the same object', () => {
    // Karpenter's own case: admitted by the API server, rejected by its kubelet validation.
    const raw = aNodeClassObject({
      metadata: AFTER_NEWEST,
      spec: { kubelet: { notAKubeletField: true, podsPerCore: 'ten' } },
    });
    const schema = nodeClassSchemaValid.evaluate(anInventory([raw]), { now });
    const kubelet = kubeletConfigValid.evaluate(anInventory([raw]), { now });
    expect(schema.map((finding) => finding.status)).toEqual(['pass']);
    expect(violations(kubelet).map(([path, rule]) => `${path}#${rule}`)).toEqual([
      'spec.kubelet.podsPerCore#type',
    ]);
  });

  it('reports fields an AMI family other than AL2023 would drop', () => {
    const findings = evaluate(
      { podsPerCore: 4, clusterDNS: ['10.100.0.10', 'fd00::a'], serializeImagePulls: false },
      { amiSelectorTerms: [{ alias: 'bottlerocket@v1.30.0' }] }
    );
    expect(violations(findings)).toEqual([
      [
        'spec.kubelet',
        'ami-family-fields',
        'has fields not applied by the Bottlerocket AMI family that would be silently dropped: podsPerCore, serializeImagePulls',
      ],
      [
        'spec.kubelet.clusterDNS',
        'ami-family-cluster-dns',
        "the Bottlerocket AMI family doesn't accept multiple entries, only one, but 2 were set",
      ],
    ]);
  });

  it('lets AL2023 and Custom classes set any kubelet field', () => {
    const kubelet = { serializeImagePulls: false, clusterDNS: ['10.100.0.10', '10.100.0.11'] };
    expect(violations(evaluate(kubelet))).toEqual([]);
    expect(
      violations(evaluate(kubelet, { amiFamily: 'Custom', amiSelectorTerms: [{ id: 'ami-0abc' }] }))
    ).toEqual([]);
  });

  it('does not evaluate a NodeClass that does not parse, as a follow-on of nodeclass-schema-valid', () => {
    const raw = aNodeClassObject({
      spec: { kubelet: { maxPods: 'x' }, subnetSelectorTerms: 'all' },
    });
    const findings = kubeletConfigValid.evaluate(anInventory([raw]), { now });
    expect(findings.map((finding) => [finding.status, finding.causedBy?.checkId])).toEqual([
      ['error', 'nodeclass-schema-valid'],
    ]);
  });
});

/** The class with `kubelet` at Karpenter `version` (annotation; unknown when undefined). */
function evaluateAt(
  version: string | undefined,
  kubelet: Record<string, unknown>,
  spec: Record<string, unknown> = {}
): readonly FindingDraft[] {
  const annotations = version ? { 'nodeclass-scanner/karpenter-version': version } : {};
  const raw = aNodeClassObject({ metadata: { annotations }, spec: { ...spec, kubelet } });
  return kubeletConfigValid.evaluate(anInventory([raw]), { now });
}

const pathRules = (findings: readonly FindingDraft[]) =>
  findings.filter((f) => f.status === 'fail').map((f) => `${f.evidence?.path}#${f.evidence?.rule}`);

// Every release up to v1.14.1 types spec.kubelet in the CRD: [label, kubelet, path#rule, message].
const REFUSED: readonly [string, Record<string, unknown>, string, string][] = [
  [
    'an eviction threshold 5%3',
    { evictionHard: { 'memory.available': '5%3' } },
    'spec.kubelet.evictionHard.memory.available#pattern',
    'should match',
  ],
  [
    'an eviction threshold 110%',
    {
      evictionSoft: { 'memory.available': '110%' },
      evictionSoftGracePeriod: { 'memory.available': '1m' },
    },
    'spec.kubelet.evictionSoft.memory.available#pattern',
    'should match',
  ],
  [
    'an unknown eviction signal',
    { evictionHard: { 'memory.free': '5%' } },
    'spec.kubelet.evictionHard#eviction-signal',
    "valid keys for evictionHard are ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available']",
  ],
  [
    'a soft threshold without a grace period',
    { evictionSoft: { 'memory.available': '10%' } },
    'spec.kubelet#eviction-soft-grace-period',
    'evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod',
  ],
  [
    'a grace period without a soft threshold',
    { evictionSoftGracePeriod: { 'memory.available': '1m' } },
    'spec.kubelet#eviction-grace-period-soft',
    'evictionSoftGracePeriod OwnerKey does not have a matching evictionSoft',
  ],
  [
    'a reserved resource the kubelet does not reserve',
    { kubeReserved: { gpu: '1' } },
    'spec.kubelet.kubeReserved#reservable-resource',
    "valid keys for kubeReserved are ['cpu','memory','ephemeral-storage','pid']",
  ],
  [
    'a negative reservation',
    { systemReserved: { cpu: '-100m' } },
    'spec.kubelet.systemReserved#not-negative',
    'systemReserved value cannot be a negative resource quantity',
  ],
  [
    'imageGC high not above low',
    { imageGCHighThresholdPercent: 80, imageGCLowThresholdPercent: 80 },
    'spec.kubelet#image-gc-thresholds',
    'imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent',
  ],
  [
    'a maxPods expression',
    { maxPods: 'vcpus * 10' },
    'spec.kubelet.maxPods#type',
    'must be of type integer',
  ],
  [
    'a negative podsPerCore',
    { podsPerCore: -1 },
    'spec.kubelet.podsPerCore#minimum',
    'greater than or equal to 0',
  ],
];

describe('kubelet-config-valid: the CRD of every release up to v1.14.1 validates spec.kubelet', () => {
  it.each(REFUSED)(
    'refuses %s at apply, in v1.0.0 and v1.14.1 alike',
    (_label, kubelet, pathRule, message) => {
      for (const version of ['1.0.0', '1.14.1']) {
        const findings = evaluateAt(version, kubelet);
        expect(pathRules(findings), version).toEqual([pathRule]);
        expect(findings[0]?.message).toContain(message);
        expect(findings[0]?.message).toContain(
          `The API server refuses this EC2NodeClass at apply: Karpenter v${version}'s CRD validates spec.kubelet.`
        );
        expect(findings[0]?.severity).toBe('high');
        expect(findings[0]?.evidence).toMatchObject({ mechanism: 'api-server' });
      }
    }
  );

  it.each(REFUSED)('names the controller for %s after v1.14.1', (label, kubelet) => {
    const findings = evaluateAt('1.15.0', kubelet).filter((f) => f.status === 'fail');
    // The controller's rules differ in detail (it takes maxPods expressions), never in wording.
    expect(findings.length > 0).toBe(label !== 'a maxPods expression');
    for (const finding of findings) expect(finding.message).toContain('ValidationSucceeded=False');
    expect(findings.every((finding) => finding.evidence?.mechanism === 'controller')).toBe(true);
  });

  it('uses the newest release (v1.14.1) when the version is unknown, and says so', () => {
    const findings = evaluateAt(undefined, {
      imageGCHighThresholdPercent: 50,
      imageGCLowThresholdPercent: 60,
    });
    expect(pathRules(findings)).toEqual(['spec.kubelet#image-gc-thresholds']);
    expect(findings[0]?.message).toContain("Karpenter v1.14.1's CRD validates spec.kubelet");
    expect(String(findings[0]?.evidence?.rules)).toContain('newest release, v1.14.1');
  });

  it('reports fields the release CRD does not have as unknown fields, with a near miss', () => {
    const findings = evaluateAt('1.14.1', { maxPod: 10, registerWithTaints: [] });
    expect(pathRules(findings)).toEqual([
      'spec.kubelet.maxPod#unknown-field',
      'spec.kubelet.registerWithTaints#unknown-field',
    ]);
    expect(findings[0]?.message).toContain('did you mean "maxPods"?');
    expect(findings[0]?.message).toContain('kubectl apply and create reject the whole object');
  });

  it('passes a kubelet the release CRD admits, values the controller would refuse included', () => {
    // A negative eviction quantity and a malformed grace period: the CRD has no rule for them.
    const findings = evaluateAt('1.14.1', {
      maxPods: 110,
      evictionHard: { 'memory.available': '-1Gi', 'nodefs.available': '' },
      evictionSoft: { 'memory.available': '10%' },
      evictionSoftGracePeriod: { 'memory.available': 'soon' },
      clusterDNS: ['10.100.0.10'],
    });
    expect(findings.map((finding) => finding.status)).toEqual(['pass']);
    expect(findings[0]?.message).toBe(
      "spec.kubelet passes the kubelet rules of Karpenter v1.14.1's CRD."
    );
  });

  it('tells of settings the AMI family ignores as a notice: the release admits them', () => {
    const findings = evaluateAt(
      '1.14.1',
      { podsPerCore: 4 },
      { amiSelectorTerms: [{ alias: 'bottlerocket@latest' }] }
    );
    expect(findings.map((finding) => [finding.status, finding.evidence?.rule])).toEqual([
      ['notice', 'ami-family-fields'],
    ]);
    expect(findings[0]?.message).toContain('Karpenter v1.14.1 admits it');
  });
});

describe('kubelet-config-valid: with the installed CRD at hand', () => {
  const verdict = (openPaths: string[]): AdmissionVerdict => ({
    crd: 'ec2nodeclasses.karpenter.k8s.aws from cluster prod',
    version: 'v1',
    violations: [],
    pruned: [],
    defaulted: {},
    openPaths,
    skippedTransitionRules: 0,
  });
  const withAdmission = (
    kubelet: Record<string, unknown>,
    admission: AdmissionVerdict,
    version: string
  ) => {
    const raw = aNodeClassObject({
      metadata: { annotations: { 'nodeclass-scanner/karpenter-version': version } },
      spec: { kubelet },
    });
    return kubeletConfigValid.evaluate(
      emptyInventory({ nodeClasses: [{ ...aNodeClassEntry(raw), admission }] }),
      { now }
    );
  };

  it('defers to nodeclass-schema-valid when the CRD validated spec.kubelet', () => {
    // Even for a version newer than v1.14.1: the installed CRD is what the API server runs.
    expect(withAdmission({ podsPerCore: 'ten' }, verdict([]), '1.15.0')).toEqual([]);
  });

  it('names the controller where the installed CRD leaves spec.kubelet open, whatever the release', () => {
    const findings = withAdmission({ podsPerCore: 'ten' }, verdict(['spec.kubelet']), '1.8.3');
    expect(pathRules(findings)).toEqual(['spec.kubelet.podsPerCore#type']);
    expect(findings[0]?.message).toContain('ValidationSucceeded=False');
    expect(String(findings[0]?.evidence?.rules)).toContain(
      'the installed CRD (ec2nodeclasses.karpenter.k8s.aws from cluster prod) leaves spec.kubelet open'
    );
  });
});

describe('kubelet-config-valid: the controller Deployment could not be read', () => {
  /** Refused by the CRD of every release up to v1.14.1 (the rules used without a version). */
  const badThreshold = { evictionHard: { 'memory.available': '5%3' } };
  const evaluateIn = (cluster: Partial<ClusterContext>) =>
    kubeletConfigValid.evaluate(
      anInventory([aNodeClassObject({ spec: { kubelet: badThreshold } })], { cluster }),
      { now }
    );

  it("reports an error with a read fault instead of the newest release's rules", () => {
    const findings = evaluateIn({ state: aControllerUnreadState() });
    expect(findings.map((finding) => finding.status)).toEqual(['error']);
    expect(findings[0]?.readFault).toEqual(CONTROLLER_UNREAD);
  });

  it('judges by --karpenter-version when it is given', () => {
    const findings = evaluateIn({
      state: aControllerUnreadState(),
      karpenterVersion: aKarpenterVersion('1.14.1'),
    });
    expect(pathRules(findings)).toEqual(['spec.kubelet.evictionHard.memory.available#pattern']);
  });

  it("judges by the newest release's rules, as before, when the version is simply not given", () => {
    const findings = evaluateIn({});
    expect(pathRules(findings)).toEqual(['spec.kubelet.evictionHard.memory.available#pattern']);
    expect(findings.some((finding) => finding.readFault !== undefined)).toBe(false);
  });
});
