import { describe, expect, it } from 'vitest';
import type { FindingDraft } from '../../../lambda/core/check.js';
import { kubeletConfigValid } from '../../../lambda/core/checks/kubelet-config-valid.js';
import { nodeClassSchemaValid } from '../../../lambda/core/checks/nodeclass-schema-valid.js';
import { aNodeClassObject, anInventory } from '../../support/builders.js';

const now = new Date('2026-11-01T00:00:00Z');

function evaluate(
  kubelet: Record<string, unknown> | undefined,
  spec: Record<string, unknown> = {}
): readonly FindingDraft[] {
  const raw = aNodeClassObject({ spec: { ...spec, ...(kubelet ? { kubelet } : {}) } });
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

describe('kubelet-config-valid', () => {
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
