import { describe, expect, it } from 'vitest';
import type { AdmissionVerdict } from '../../../lambda/core/admission/types.js';
import type { FindingDraft } from '../../../lambda/core/check.js';
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

function evaluateRaw(raw: unknown): readonly FindingDraft[] {
  return nodeClassSchemaValid.evaluate(anInventory([raw]), { now });
}

function evaluate(spec: Record<string, unknown>): readonly FindingDraft[] {
  return evaluateRaw(aNodeClassObject({ spec }));
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

const sel = { tags: { 'karpenter.sh/discovery': 'demo' } };
const ebs = { volumeSize: '20Gi', volumeType: 'gp3' };
const tooMany = (term: unknown) => Array.from({ length: 31 }, () => term);

// Every CRD rule, each with a spec that breaks only that rule: [label, spec, path, rule, message].
const RULES: readonly [string, Record<string, unknown>, string, string, string][] = [
  // Object-level CEL rules of the CRD
  [
    'both role and instanceProfile',
    { instanceProfile: 'NodeProfile' },
    'spec',
    'role-or-instance-profile',
    "must specify exactly one of ['role', 'instanceProfile']",
  ],
  [
    'neither role nor instanceProfile',
    { role: undefined },
    'spec',
    'role-or-instance-profile',
    "must specify exactly one of ['role', 'instanceProfile']",
  ],
  ['empty role', { role: '' }, 'spec.role', 'not-empty', 'role cannot be empty'],
  [
    'empty instanceProfile',
    { role: undefined, instanceProfile: '' },
    'spec.instanceProfile',
    'not-empty',
    'instanceProfile cannot be empty',
  ],
  [
    'amiFamily missing without an alias',
    { amiSelectorTerms: [{ id: 'ami-0123abcd' }] },
    'spec',
    'ami-family-required',
    'must specify amiFamily if amiSelectorTerms does not contain an alias',
  ],
  [
    'AL2 alias with amiFamily AL2023',
    { amiFamily: 'AL2023', amiSelectorTerms: [{ alias: 'al2@latest' }] },
    'spec.amiFamily',
    'alias-compatible-al2',
    "if set, amiFamily must be 'AL2' or 'Custom' when using an AL2 alias",
  ],
  [
    'AL2023 alias with amiFamily AL2',
    { amiFamily: 'AL2', amiSelectorTerms: [{ alias: 'al2023@latest' }] },
    'spec.amiFamily',
    'alias-compatible-al2023',
    "if set, amiFamily must be 'AL2023' or 'Custom' when using an AL2023 alias",
  ],
  [
    'Bottlerocket alias with amiFamily AL2023',
    { amiFamily: 'AL2023', amiSelectorTerms: [{ alias: 'bottlerocket@v1.30.0' }] },
    'spec.amiFamily',
    'alias-compatible-bottlerocket',
    "if set, amiFamily must be 'Bottlerocket' or 'Custom' when using a Bottlerocket alias",
  ],
  [
    'Windows2019 alias with amiFamily Windows2022',
    { amiFamily: 'Windows2022', amiSelectorTerms: [{ alias: 'windows2019@latest' }] },
    'spec.amiFamily',
    'alias-compatible-windows2019',
    "if set, amiFamily must be 'Windows2019' or 'Custom' when using a Windows2019 alias",
  ],
  [
    'Windows2022 alias with amiFamily Windows2019',
    { amiFamily: 'Windows2019', amiSelectorTerms: [{ alias: 'windows2022@latest' }] },
    'spec.amiFamily',
    'alias-compatible-windows2022',
    "if set, amiFamily must be 'Windows2022' or 'Custom' when using a Windows2022 alias",
  ],
  [
    'Windows2025 alias with amiFamily AL2023',
    { amiFamily: 'AL2023', amiSelectorTerms: [{ alias: 'windows2025@latest' }] },
    'spec.amiFamily',
    'alias-compatible-windows2025',
    "if set, amiFamily must be 'Windows2025' or 'Custom' when using a Windows2025 alias",
  ],
  [
    'amiFamily not in the enum',
    { amiFamily: 'Ubuntu', amiSelectorTerms: [{ id: 'ami-0abc' }] },
    'spec.amiFamily',
    'enum',
    'Unsupported value: "Ubuntu": supported values: "AL2", "AL2023", "Bottlerocket", "Custom", "Windows2019", "Windows2022", "Windows2025"',
  ],
  // subnetSelectorTerms
  [
    'empty subnetSelectorTerms',
    { subnetSelectorTerms: [] },
    'spec.subnetSelectorTerms',
    'not-empty',
    'subnetSelectorTerms cannot be empty',
  ],
  [
    'subnet term without tags or id',
    { subnetSelectorTerms: [{}] },
    'spec.subnetSelectorTerms[0]',
    'term-has-field',
    "expected at least one, got none, ['tags', 'id']",
  ],
  [
    'every subnet term mixes id and tags',
    { subnetSelectorTerms: [{ id: 'subnet-0abc', ...sel }] },
    'spec.subnetSelectorTerms',
    'id-exclusive',
    "'id' is mutually exclusive, cannot be set with a combination of other fields in a subnet selector term",
  ],
  [
    'subnet id pattern',
    { subnetSelectorTerms: [{ id: 'sn-0abc' }] },
    'spec.subnetSelectorTerms[0].id',
    'pattern',
    "should match 'subnet-[0-9a-z]+'",
  ],
  [
    'subnet terms over 30',
    { subnetSelectorTerms: tooMany(sel) },
    'spec.subnetSelectorTerms',
    'max-items',
    'must have at most 30 items (has 31)',
  ],
  [
    'subnet tag with an empty value',
    { subnetSelectorTerms: [{ tags: { team: '' } }] },
    'spec.subnetSelectorTerms[0].tags',
    'tags-not-empty',
    "empty tag keys or values aren't supported",
  ],
  [
    'subnet tags over 20',
    {
      subnetSelectorTerms: [
        { tags: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) },
      ],
    },
    'spec.subnetSelectorTerms[0].tags',
    'max-properties',
    'must have at most 20 items (has 21)',
  ],
  // securityGroupSelectorTerms
  [
    'empty securityGroupSelectorTerms',
    { securityGroupSelectorTerms: [] },
    'spec.securityGroupSelectorTerms',
    'not-empty',
    'securityGroupSelectorTerms cannot be empty',
  ],
  [
    'security group term without a field',
    { securityGroupSelectorTerms: [{}] },
    'spec.securityGroupSelectorTerms[0]',
    'term-has-field',
    "expected at least one, got none, ['tags', 'id', 'name']",
  ],
  [
    'every security group term mixes id and tags',
    { securityGroupSelectorTerms: [{ id: 'sg-0abc', ...sel }] },
    'spec.securityGroupSelectorTerms',
    'id-exclusive',
    "'id' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term",
  ],
  [
    'every security group term mixes name and tags',
    { securityGroupSelectorTerms: [{ name: 'nodes', ...sel }] },
    'spec.securityGroupSelectorTerms',
    'name-exclusive',
    "'name' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term",
  ],
  [
    'security group id pattern',
    { securityGroupSelectorTerms: [{ id: 'group-1' }] },
    'spec.securityGroupSelectorTerms[0].id',
    'pattern',
    "should match 'sg-[0-9a-z]+'",
  ],
  [
    'security group terms over 30',
    { securityGroupSelectorTerms: tooMany(sel) },
    'spec.securityGroupSelectorTerms',
    'max-items',
    'must have at most 30 items (has 31)',
  ],
  // amiSelectorTerms
  [
    'empty amiSelectorTerms',
    { amiFamily: 'AL2023', amiSelectorTerms: [] },
    'spec.amiSelectorTerms',
    'min-items',
    'should have at least 1 items',
  ],
  [
    'AMI terms over 30',
    { amiFamily: 'AL2023', amiSelectorTerms: tooMany({ name: 'my-ami' }) },
    'spec.amiSelectorTerms',
    'max-items',
    'must have at most 30 items (has 31)',
  ],
  [
    'AMI term with only owner',
    { amiFamily: 'AL2023', amiSelectorTerms: [{ owner: 'self' }] },
    'spec.amiSelectorTerms[0]',
    'term-has-field',
    "expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']",
  ],
  [
    'AMI id with owner',
    { amiFamily: 'AL2023', amiSelectorTerms: [{ id: 'ami-0abc', owner: 'self' }] },
    'spec.amiSelectorTerms[0]',
    'id-exclusive',
    "'id' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",
  ],
  [
    'AMI id pattern',
    { amiFamily: 'AL2023', amiSelectorTerms: [{ id: 'image-0abc' }] },
    'spec.amiSelectorTerms[0].id',
    'pattern',
    "should match 'ami-[0-9a-z]+'",
  ],
  [
    'alias with a name in the same term',
    { amiSelectorTerms: [{ alias: 'al2023@latest', name: 'x' }] },
    'spec.amiSelectorTerms[0]',
    'alias-exclusive',
    "'alias' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",
  ],
  [
    'alias next to another term',
    { amiSelectorTerms: [{ alias: 'al2023@latest' }, { id: 'ami-0abc' }] },
    'spec.amiSelectorTerms',
    'alias-only-term',
    "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms",
  ],
  [
    'alias with an empty version',
    { amiSelectorTerms: [{ alias: 'al2023@' }] },
    'spec.amiSelectorTerms[0].alias',
    'alias-format',
    "'alias' is improperly formatted, must match the format 'family@version'",
  ],
  [
    'alias family not supported',
    { amiSelectorTerms: [{ alias: 'ubuntu@22.04' }] },
    'spec.amiSelectorTerms[0].alias',
    'alias-family',
    "family is not supported, must be one of the following: 'al2', 'al2023', 'bottlerocket', 'windows2019', 'windows2022', 'windows2025'",
  ],
  [
    'windows alias pinned to a version',
    { amiSelectorTerms: [{ alias: 'windows2022@v20251001' }] },
    'spec.amiSelectorTerms[0].alias',
    'windows-alias-latest',
    "windows families may only specify version 'latest'",
  ],
  [
    'alias longer than 30 characters',
    { amiSelectorTerms: [{ alias: 'bottlerocket@v1.30.0-abcdefghijk' }] },
    'spec.amiSelectorTerms[0].alias',
    'max-length',
    'may not be longer than 30',
  ],
  [
    'AMI tags with an empty key',
    { amiFamily: 'AL2023', amiSelectorTerms: [{ tags: { '': 'x' }, owner: 'self' }] },
    'spec.amiSelectorTerms[0].tags',
    'tags-not-empty',
    "empty tag keys or values aren't supported",
  ],
  // capacityReservationSelectorTerms
  [
    'capacity reservation term without a field',
    { capacityReservationSelectorTerms: [{ ownerID: '123456789012' }] },
    'spec.capacityReservationSelectorTerms[0]',
    'term-has-field',
    "expected at least one, got none, ['tags', 'id', 'instanceMatchCriteria']",
  ],
  [
    'every capacity reservation term mixes id and ownerID',
    { capacityReservationSelectorTerms: [{ id: 'cr-0abc', ownerID: '123456789012' }] },
    'spec.capacityReservationSelectorTerms',
    'id-exclusive',
    "'id' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term",
  ],
  [
    'capacity reservation id pattern (anchored)',
    { capacityReservationSelectorTerms: [{ id: 'xcr-0abc' }] },
    'spec.capacityReservationSelectorTerms[0].id',
    'pattern',
    "should match '^cr-[0-9a-z]+$'",
  ],
  [
    'capacity reservation ownerID pattern',
    { capacityReservationSelectorTerms: [{ ...sel, ownerID: '1234' }] },
    'spec.capacityReservationSelectorTerms[0].ownerID',
    'pattern',
    "should match '^[0-9]{12}$'",
  ],
  [
    'capacity reservation instanceMatchCriteria enum',
    { capacityReservationSelectorTerms: [{ instanceMatchCriteria: 'any' }] },
    'spec.capacityReservationSelectorTerms[0].instanceMatchCriteria',
    'enum',
    'Unsupported value: "any": supported values: "open", "targeted"',
  ],
  [
    'capacity reservation terms over 30',
    { capacityReservationSelectorTerms: tooMany({ instanceMatchCriteria: 'open' }) },
    'spec.capacityReservationSelectorTerms',
    'max-items',
    'must have at most 30 items (has 31)',
  ],
  // placementGroupSelector
  [
    'placement group selector without a field',
    { placementGroupSelector: {} },
    'spec.placementGroupSelector',
    'has-field',
    "expected at least one, got none, ['name', 'id']",
  ],
  [
    'placement group selector with name and id',
    { placementGroupSelector: { name: 'pg', id: 'pg-0abc' } },
    'spec.placementGroupSelector',
    'name-id-exclusive',
    "'name' and 'id' are mutually exclusive",
  ],
  [
    'placement group id pattern',
    { placementGroupSelector: { id: 'placement-1' } },
    'spec.placementGroupSelector.id',
    'pattern',
    "should match '^pg-[0-9a-z]+$'",
  ],
  [
    'placement group empty name',
    { placementGroupSelector: { name: '' } },
    'spec.placementGroupSelector.name',
    'min-length',
    'should be at least 1 chars long',
  ],
  // tags
  [
    'empty tag key',
    { tags: { '': 'x' } },
    'spec.tags',
    'key-not-empty',
    "empty tag keys aren't supported",
  ],
  // blockDeviceMappings
  [
    'two root volumes',
    {
      blockDeviceMappings: [
        { deviceName: '/dev/xvda', rootVolume: true, ebs },
        { deviceName: '/dev/xvdb', rootVolume: true, ebs },
      ],
    },
    'spec.blockDeviceMappings',
    'one-root-volume',
    'must have only one blockDeviceMappings with rootVolume',
  ],
  [
    'block device mappings over 50',
    {
      blockDeviceMappings: Array.from({ length: 51 }, (_, i) => ({
        deviceName: `/dev/xvd${i}`,
        ebs,
      })),
    },
    'spec.blockDeviceMappings',
    'max-items',
    'must have at most 50 items (has 51)',
  ],
  [
    'ebs without snapshotID or volumeSize',
    { blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { volumeType: 'gp3' } }] },
    'spec.blockDeviceMappings[0].ebs',
    'size-or-snapshot',
    'snapshotID or volumeSize must be defined',
  ],
  [
    'volumeInitializationRate without snapshotID',
    {
      blockDeviceMappings: [
        { deviceName: '/dev/xvda', ebs: { ...ebs, volumeInitializationRate: 200 } },
      ],
    },
    'spec.blockDeviceMappings[0].ebs',
    'snapshot-for-initialization-rate',
    'snapshotID must be set when volumeInitializationRate is set',
  ],
  [
    'volumeInitializationRate out of range',
    {
      blockDeviceMappings: [
        {
          deviceName: '/dev/xvda',
          ebs: { snapshotID: 'snap-0abc', volumeInitializationRate: 50 },
        },
      ],
    },
    'spec.blockDeviceMappings[0].ebs.volumeInitializationRate',
    'minimum',
    'should be greater than or equal to 100',
  ],
  [
    'volumeType enum',
    { blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { ...ebs, volumeType: 'gp4' } }] },
    'spec.blockDeviceMappings[0].ebs.volumeType',
    'enum',
    'Unsupported value: "gp4": supported values: "standard", "io1", "io2", "gp2", "sc1", "st1", "gp3"',
  ],
  [
    'volumeSize without a unit as a number',
    { blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { volumeSize: 100 } }] },
    'spec.blockDeviceMappings[0].ebs.volumeSize',
    'type',
    'must be of type string with a unit (Gi, G, Ti or T), e.g. "100Gi"',
  ],
  [
    'volumeSize with an unsupported unit',
    { blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { volumeSize: '100Mi' } }] },
    'spec.blockDeviceMappings[0].ebs.volumeSize',
    'pattern',
    "should match '^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|[5][0-8][0-9]{3}|59000)Gi|(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|[6][0-3][0-9]{3}|64000)G|([1-9]||[1-5][0-7]|58)Ti|([1-9]||[1-5][0-9]|6[0-3]|64)T)$'",
  ],
  // metadataOptions
  [
    'httpEndpoint enum',
    { metadataOptions: { httpEndpoint: 'on' } },
    'spec.metadataOptions.httpEndpoint',
    'enum',
    'Unsupported value: "on": supported values: "enabled", "disabled"',
  ],
  [
    'httpProtocolIPv6 enum',
    { metadataOptions: { httpProtocolIPv6: 'true' } },
    'spec.metadataOptions.httpProtocolIPv6',
    'enum',
    'Unsupported value: "true": supported values: "enabled", "disabled"',
  ],
  [
    'httpTokens enum',
    { metadataOptions: { httpTokens: 'Required' } },
    'spec.metadataOptions.httpTokens',
    'enum',
    'Unsupported value: "Required": supported values: "required", "optional"',
  ],
  [
    'hop limit below 1',
    { metadataOptions: { httpPutResponseHopLimit: 0 } },
    'spec.metadataOptions.httpPutResponseHopLimit',
    'minimum',
    'should be greater than or equal to 1',
  ],
  [
    'hop limit above 64',
    { metadataOptions: { httpPutResponseHopLimit: 65 } },
    'spec.metadataOptions.httpPutResponseHopLimit',
    'maximum',
    'should be less than or equal to 64',
  ],
  // networkInterfaces
  [
    'network interfaces without a primary interface',
    { networkInterfaces: [{ networkCardIndex: 0, deviceIndex: 1, interfaceType: 'interface' }] },
    'spec.networkInterfaces',
    'primary-interface',
    "networkInterfaces must include a primary interface with interfaceType='interface'",
  ],
  [
    'duplicate network interface slots',
    {
      networkInterfaces: [
        { networkCardIndex: 0, deviceIndex: 0, interfaceType: 'interface' },
        { networkCardIndex: 0, deviceIndex: 0, interfaceType: 'interface' },
      ],
    },
    'spec.networkInterfaces',
    'unique-interfaces',
    'networkInterfaces must not have duplicate networkCardIndex and deviceIndex pairs, and can have at most one efa device per network card',
  ],
  [
    'two EFA devices on one network card',
    {
      networkInterfaces: [
        { networkCardIndex: 0, deviceIndex: 0, interfaceType: 'interface' },
        { networkCardIndex: 1, deviceIndex: 0, interfaceType: 'efa-only' },
        { networkCardIndex: 1, deviceIndex: 1, interfaceType: 'efa-only' },
      ],
    },
    'spec.networkInterfaces',
    'unique-interfaces',
    'networkInterfaces must not have duplicate networkCardIndex and deviceIndex pairs, and can have at most one efa device per network card',
  ],
  [
    'network interface type enum',
    {
      networkInterfaces: [
        { networkCardIndex: 0, deviceIndex: 0, interfaceType: 'interface' },
        { networkCardIndex: 1, deviceIndex: 0, interfaceType: 'efa' },
      ],
    },
    'spec.networkInterfaces[1].interfaceType',
    'enum',
    'Unsupported value: "efa": supported values: "interface", "efa-only"',
  ],
  [
    'network interface missing deviceIndex',
    {
      networkInterfaces: [
        { networkCardIndex: 0, deviceIndex: 0, interfaceType: 'interface' },
        { networkCardIndex: 1, interfaceType: 'efa-only' },
      ],
    },
    'spec.networkInterfaces[1].deviceIndex',
    'required',
    'Required value',
  ],
  // connectionTracking, cpuOptions, scalars
  [
    'connectionTracking without a timeout',
    { connectionTracking: {} },
    'spec.connectionTracking',
    'at-least-one',
    'at least one of tcpEstablishedTimeout, udpStreamTimeout, or udpTimeout must be set',
  ],
  [
    'udpTimeout out of range',
    { connectionTracking: { udpTimeout: 61 } },
    'spec.connectionTracking.udpTimeout',
    'maximum',
    'should be less than or equal to 60',
  ],
  [
    'tcpEstablishedTimeout of the wrong type',
    { connectionTracking: { tcpEstablishedTimeout: '300', udpTimeout: 30 } },
    'spec.connectionTracking.tcpEstablishedTimeout',
    'type',
    'must be of type integer',
  ],
  [
    'cpuOptions enum',
    { cpuOptions: { nestedVirtualization: 'on' } },
    'spec.cpuOptions.nestedVirtualization',
    'enum',
    'Unsupported value: "on": supported values: "enabled", "disabled"',
  ],
  [
    'cpuOptions of the wrong type',
    { cpuOptions: { nestedVirtualization: true } },
    'spec.cpuOptions.nestedVirtualization',
    'type',
    'must be of type string',
  ],
  [
    'negative ipPrefixCount',
    { ipPrefixCount: -1 },
    'spec.ipPrefixCount',
    'minimum',
    'should be greater than or equal to 0',
  ],
  [
    'instanceStorePolicy enum',
    { instanceStorePolicy: 'RAID1' },
    'spec.instanceStorePolicy',
    'enum',
    'Unsupported value: "RAID1": supported values: "RAID0"',
  ],
];

describe('nodeclass-schema-valid', () => {
  it('passes a valid NodeClass with one pass finding', () => {
    // Act
    const findings = evaluate({});

    // Assess
    expect(findings).toHaveLength(1);
    expect(findings[0]?.status).toBe('pass');
  });

  it('passes a NodeClass that uses every optional field correctly', () => {
    const findings = evaluate({
      role: undefined,
      instanceProfile: 'NodeProfile',
      amiFamily: 'Custom',
      amiSelectorTerms: [{ alias: 'bottlerocket@v1.30.0' }],
      subnetSelectorTerms: [{ id: 'subnet-0abc', ...sel }, { id: 'subnet-0def' }],
      securityGroupSelectorTerms: [{ id: 'sg-0abc', ...sel }, { name: 'nodes' }],
      capacityReservationSelectorTerms: [
        { id: 'cr-0abc', ownerID: '123456789012' },
        { instanceMatchCriteria: 'open' },
      ],
      placementGroupSelector: { name: 'cluster-pg' },
      tags: { team: 'platform' },
      blockDeviceMappings: [
        { deviceName: '/dev/xvda', rootVolume: true, ebs: { ...ebs, encrypted: true } },
        {
          deviceName: '/dev/xvdb',
          ebs: { snapshotID: 'snap-0abc', volumeInitializationRate: 150 },
        },
        { deviceName: '/dev/xvdc', ebs: { volumeSize: '2Ti' } },
        { deviceName: '/dev/xvdd' },
      ],
      networkInterfaces: [
        { networkCardIndex: 0, deviceIndex: 0, interfaceType: 'interface' },
        { networkCardIndex: 1, deviceIndex: 0, interfaceType: 'efa-only' },
      ],
      connectionTracking: { tcpEstablishedTimeout: 300 },
      cpuOptions: { nestedVirtualization: 'enabled' },
      ipPrefixCount: 0,
      instanceStorePolicy: 'RAID0',
      kubelet: {
        maxPods: 110,
        imageGCHighThresholdPercent: 85,
        imageGCLowThresholdPercent: 80,
        systemReserved: { cpu: '100m', memory: '100Mi' },
        evictionSoft: { 'memory.available': '10%' },
        evictionSoftGracePeriod: { 'memory.available': '1m' },
      },
    });
    expect(violations(findings)).toEqual([]);
    expect(findings.map((finding) => finding.status)).toEqual(['pass']);
  });

  it('leaves spec.kubelet to kubelet-config-valid, so no kubelet violation is reported twice', () => {
    // Values the release CRDs reject: kubelet-config-valid reports them (see its tests).
    const findings = evaluate({
      kubelet: {
        maxPods: 'vcpus * 10',
        podsPerCore: 'ten',
        notAKubeletField: true,
        logging: { format: 'json', options: { json: { infoBufferSize: '100Mi' } } },
      },
    });
    expect(violations(findings)).toEqual([]);
  });

  it('rejects a kubelet that is not an object', () => {
    const findings = evaluate({ kubelet: ['maxPods'] });
    expect(violations(findings).map(([path, rule]) => [path, rule])).toEqual([
      ['spec.kubelet', 'type'],
    ]);
  });

  it.each(RULES)('fails for %s', (_label, spec, path, rule, message) => {
    // Act
    const findings = evaluate(spec);

    // Assess
    expect(violations(findings)).toEqual([[path, rule, message]]);
    expect(findings[0]?.location).toEqual({ path });
    expect(findings[0]?.discriminator).toBe(`${path}#${rule}`);
  });

  it('accepts subnet and security group terms mixing id with tags unless every term does (!self.all)', () => {
    const findings = evaluate({
      subnetSelectorTerms: [{ id: 'subnet-0abc', ...sel }, sel],
      securityGroupSelectorTerms: [{ id: 'sg-0abc', name: 'nodes' }, sel],
      capacityReservationSelectorTerms: [
        { id: 'cr-0abc', ...sel },
        { instanceMatchCriteria: 'open' },
      ],
    });
    expect(violations(findings)).toEqual([]);
  });

  it('reports one finding per violation, each with its own id discriminator', () => {
    // Act
    const findings = evaluate({
      instanceProfile: 'NodeProfile',
      subnetSelectorTerms: [],
      amiSelectorTerms: [{ alias: 'windows2022@v1' }, { id: 'ami-0abc' }],
      metadataOptions: { httpPutResponseHopLimit: 100 },
    });

    // Assess
    expect(violations(findings).map(([path, rule]) => `${path}#${rule}`)).toEqual([
      'spec#role-or-instance-profile',
      'spec.subnetSelectorTerms#not-empty',
      'spec.amiSelectorTerms[0].alias#windows-alias-latest',
      'spec.amiSelectorTerms#alias-only-term',
      'spec.metadataOptions.httpPutResponseHopLimit#maximum',
    ]);
    const discriminators = findings.map((finding) => finding.discriminator);
    expect(new Set(discriminators).size).toBe(discriminators.length);
  });

  it('accepts amiFamily Custom with any alias, and an alias without amiFamily', () => {
    expect(
      violations(evaluate({ amiFamily: 'Custom', amiSelectorTerms: [{ alias: 'al2@latest' }] }))
    ).toEqual([]);
    expect(violations(evaluate({ amiSelectorTerms: [{ alias: 'windows2025@latest' }] }))).toEqual(
      []
    );
  });

  it('accepts the matching amiFamily for an alias', () => {
    const findings = evaluate({
      amiFamily: 'Bottlerocket',
      amiSelectorTerms: [{ alias: 'bottlerocket@latest' }],
    });
    expect(violations(findings)).toEqual([]);
  });

  it('reports an alias without @ as badly formatted and unsupported', () => {
    const findings = evaluate({ amiSelectorTerms: [{ alias: 'al2023' }] });
    expect(violations(findings).map(([, rule]) => rule)).toEqual(['alias-format']);
  });

  describe('structural problems (the object does not parse)', () => {
    it.each([
      ['spec.subnetSelectorTerms', { subnetSelectorTerms: undefined }, 'Required value'],
      [
        'spec.securityGroupSelectorTerms',
        { securityGroupSelectorTerms: undefined },
        'Required value',
      ],
      ['spec.amiSelectorTerms', { amiSelectorTerms: undefined }, 'Required value'],
      ['spec.role', { role: ['a'] }, 'expected string'],
      [
        'spec.subnetSelectorTerms[0].tags.team',
        { subnetSelectorTerms: [{ tags: { team: 1 } }] },
        'expected string',
      ],
      [
        'spec.metadataOptions.httpPutResponseHopLimit',
        { metadataOptions: { httpPutResponseHopLimit: '2' } },
        'expected number',
      ],
    ])('reports %s', (path, spec, message) => {
      // Act
      const findings = evaluate(spec);

      // Assess
      expect(findings).toHaveLength(1);
      expect(findings[0]?.status).toBe('fail');
      expect(findings[0]?.message).toContain(`${path}: `);
      expect(findings[0]?.message).toContain(message);
      expect(findings[0]?.location).toEqual({ path });
      expect(findings[0]?.discriminator).toBe(`${path}#type`);
    });

    it('reports every structural problem, one finding per path', () => {
      const findings = evaluate({ subnetSelectorTerms: 'all', amiSelectorTerms: undefined });
      expect(findings.map((finding) => finding.location?.path)).toEqual([
        'spec.subnetSelectorTerms',
        'spec.amiSelectorTerms',
      ]);
    });

    it('reports a missing metadata.name and a missing spec', () => {
      const raw = { apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', metadata: {} };
      const findings = evaluateRaw(raw);
      expect(pathRules(findings)).toEqual(['metadata.name#type', 'spec#spec-missing']);
      expect(findings[0]?.message).toBe(
        'metadata.name: Required value: name or generateName is required'
      );
    });

    it('admits an object named by metadata.generateName alone, as the API server names it', () => {
      const raw = aNodeClassObject();
      raw.metadata = { generateName: 'default-' };
      const findings = evaluateRaw(raw);
      expect(findings.map((finding) => finding.status)).toEqual(['pass']);
    });
  });

  describe('an EC2NodeClass without spec', () => {
    const noSpec = { apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', metadata: {} };

    it.each([
      ['no spec', { ...noSpec, metadata: { name: 'empty' } }],
      [
        'spec: null (dropped by the API server)',
        { ...noSpec, metadata: { name: 'e' }, spec: null },
      ],
    ])('%s: admitted at apply, but a fail: the class never becomes Ready', (_label, raw) => {
      const findings = evaluateRaw(raw);
      expect(pathRules(findings)).toEqual(['spec#spec-missing']);
      expect(findings[0]?.evidence).toMatchObject({ admitted: true });
      expect(findings[0]?.message).toContain('The API server admits the object');
      expect(findings[0]?.message).toContain('never becomes Ready');
      expect(findings[0]?.remediation).toContain('amiSelectorTerms');
    });

    it('says the same when the installed CRD admitted it, naming the CRD', () => {
      const findings = evaluateWithAdmission({ ...noSpec, metadata: { name: 'e' } }, aVerdict());
      expect(pathRules(findings)).toEqual(['spec#spec-missing']);
      expect(findings[0]?.evidence).toMatchObject({ admitted: true, crd: aVerdict().crd });
    });

    it("reports the CRD's own violation instead when the installed CRD requires spec", () => {
      const admission = aVerdict({
        violations: [{ path: 'spec', rule: 'required', message: 'Required value' }],
      });
      const findings = evaluateWithAdmission({ ...noSpec, metadata: { name: 'e' } }, admission);
      expect(pathRules(findings)).toEqual(['spec#required']);
    });
  });

  describe('a v1beta1 object', () => {
    const legacy = (annotations: Record<string, string> = {}) => ({
      apiVersion: 'karpenter.k8s.aws/v1beta1',
      kind: 'EC2NodeClass',
      metadata: { name: 'legacy', annotations },
      spec: { amiFamily: 'AL2', role: 'NodeRole', subnetSelectorTerms: [sel] },
    });

    it.each([
      ['the version unknown (the newest release decides)', undefined],
      ['Karpenter v1.1.0', '1.1.0'],
    ])('fails with %s: no longer served, with a migration message', (_label, version) => {
      const cluster = version ? { karpenterVersion: aKarpenterVersion(version) } : {};
      const findings = nodeClassSchemaValid.evaluate(anInventory([legacy()], { cluster }), {
        now,
      });
      expect(findings).toHaveLength(1);
      expect(findings[0]?.status).toBe('fail');
      expect(findings[0]?.message).toBe(
        'apiVersion: karpenter.k8s.aws/v1beta1 is no longer served since Karpenter v1.1.0; migrate this EC2NodeClass to karpenter.k8s.aws/v1.'
      );
      expect(findings[0]?.remediation).toContain('amiSelectorTerms is required');
      expect(findings[0]?.location).toEqual({ path: 'apiVersion' });
    });

    it('at v1.0.x: a notice, still served through the conversion webhook but removed in v1.1.0', () => {
      const findings = evaluateRaw(legacy({ 'nodeclass-scanner/karpenter-version': '1.0.14' }));
      expect(findings).toHaveLength(1);
      expect(findings[0]?.status).toBe('notice');
      expect(findings[0]?.severity).toBe('medium');
      expect(findings[0]?.message).toContain(
        'karpenter.k8s.aws/v1beta1 is still served by Karpenter v1.0.14 (its conversion webhook'
      );
      expect(findings[0]?.message).toContain(
        'Karpenter v1.1.0 and later serve karpenter.k8s.aws/v1 only'
      );
      expect(findings[0]?.evidence).toMatchObject({
        rule: 'api-version-deprecated',
        removedIn: 'v1.1.0',
        rulesRelease: 'Karpenter v1.0.14',
      });
      expect(findings[0]?.remediation).toContain(
        'https://karpenter.sh/docs/upgrading/v1-migration/'
      );
    });

    it("with a v1.0.x CRD serving v1beta1: the CRD's v1beta1 verdict, and the notice", () => {
      const admission = aVerdict({
        version: 'v1beta1',
        violations: [{ path: 'spec', rule: 'required', message: 'amiFamily is required' }],
        pruned: ['spec.madeUp'],
      });
      const findings = evaluateWithAdmission(legacy(), admission);
      expect(findings.map((finding) => [finding.status, finding.evidence?.rule])).toEqual([
        ['fail', 'required'],
        ['fail', 'unknown-field'],
        ['notice', 'api-version-deprecated'],
      ]);
      expect(findings[1]?.message).toContain('karpenter.k8s.aws/v1beta1 EC2NodeClass CRD');
      expect(findings[2]?.message).toContain(`still served by the installed CRD ${aVerdict().crd}`);
    });

    it('with a CRD that serves v1 only: its refusal, not the built-in message', () => {
      const message = 'no matches for kind "EC2NodeClass" in version "karpenter.k8s.aws/v1beta1"';
      const admission = aVerdict({
        version: 'v1beta1',
        violations: [{ path: 'apiVersion', rule: 'version-not-served', message }],
      });
      const findings = evaluateWithAdmission(legacy(), admission);
      expect(violations(findings)).toEqual([['apiVersion', 'version-not-served', message]]);
    });
  });

  it('fails another unserved version with a plain message', () => {
    const raw = { ...aNodeClassObject(), apiVersion: 'karpenter.k8s.aws/v1alpha5' };
    const [finding] = evaluateRaw(raw);
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('karpenter.k8s.aws/v1alpha5 is not served by Karpenter v1');
  });

  it.each([
    // A region that is not one hides its partition's checks (ISO IMDS): an error, not advice.
    // (An error keeps the check's own severity: the draft sets none.)
    ['nodeclass-scanner/region', 'iso-east', 'a region name', 'error', undefined],
    ['nodeclass-scanner/region', 'us-iso-east1', 'a region name', 'error', undefined],
    ['nodeclass-scanner/karpenter-version', 'latest', 'a version', 'fail', 'low'],
  ])('reports an unusable %s annotation (%s)', (annotation, value, expected, status, severity) => {
    // Act
    const findings = evaluateRaw(
      aNodeClassObject({ metadata: { annotations: { [annotation]: value } } })
    );

    // Assess
    expect(findings).toHaveLength(1);
    expect(findings[0]?.status).toBe(status);
    expect(findings[0]?.severity).toBe(severity);
    expect(findings[0]?.message).toContain(`"${value}" is not ${expected}`);
    expect(findings[0]?.location).toEqual({ path: `metadata.annotations.${annotation}` });
  });

  it('accepts valid context annotations', () => {
    const findings = evaluateRaw(
      aNodeClassObject({
        metadata: {
          annotations: {
            'nodeclass-scanner/region': 'us-iso-east-1',
            'nodeclass-scanner/karpenter-version': 'v1.6.2',
          },
        },
      })
    );
    expect(findings.map((finding) => finding.status)).toEqual(['pass']);
  });
});

describe('nodeclass-schema-valid: fields the karpenter.k8s.aws/v1 CRD does not have', () => {
  it('reports an unknown field of a healthy-looking class, and nothing on its healthy control', () => {
    // Prepare
    const healthy = aNodeClassObject({ name: 'healthy' });
    const broken = aNodeClassObject({
      name: 'typo',
      spec: { subnetSelectorTerms: [{ tag: { 'karpenter.sh/discovery': 'demo' } }] },
    });

    // Act
    const findings = nodeClassSchemaValid.evaluate(anInventory([healthy, broken]), { now });

    // Assess
    const failing = findings.filter((finding) => finding.status === 'fail');
    expect(
      failing.map((finding) => [
        finding.resource.name,
        finding.evidence?.path,
        finding.evidence?.rule,
      ])
    ).toEqual([
      ['typo', 'spec.subnetSelectorTerms[0]', 'term-has-field'],
      ['typo', 'spec.subnetSelectorTerms[0].tag', 'unknown-field'],
    ]);
    expect(failing[1]?.message).toContain('did you mean "tags"?');
    expect(failing[1]?.severity).toBe('high');
  });

  it('names the spec field of the AWSNodeTemplate era that replaced it', () => {
    const findings = evaluate({ subnetSelector: { 'karpenter.sh/discovery': 'demo' } });
    expect(violations(findings)).toEqual([
      [
        'spec.subnetSelector',
        'unknown-field',
        expect.stringContaining('an AWSNodeTemplate field: v1 uses spec.subnetSelectorTerms'),
      ],
    ]);
  });

  it('reports unknown top-level and metadata fields, never map keys', () => {
    const findings = evaluateRaw({
      ...aNodeClassObject({ metadata: { label: { a: 'b' } }, spec: { tags: { 'any/key': 'v' } } }),
      specs: {},
    });
    expect(violations(findings).map(([path, rule]) => `${path}#${rule}`)).toEqual([
      'metadata.label#unknown-field',
      'specs#unknown-field',
    ]);
  });

  it('knows the fields each release added: networkInterfaces needs v1.11.0 (annotation or cluster)', () => {
    // Prepare
    const nics = [{ networkCardIndex: 0, deviceIndex: 0, interfaceType: 'interface' }];
    const on = (version?: string) =>
      aNodeClassObject({
        spec: { networkInterfaces: nics },
        metadata: version
          ? { annotations: { 'nodeclass-scanner/karpenter-version': version } }
          : {},
      });

    // Act: from a manifest (not applied yet), and as the cluster stored it.
    const manifest = (raw: unknown) =>
      nodeClassSchemaValid.evaluate(
        emptyInventory({
          nodeClasses: [{ ...aNodeClassEntry(raw), source: { file: 'x.yaml', document: 0 } }],
        }),
        { now }
      );
    const old = manifest(on('1.10.2'));
    const stored = evaluateRaw(on('1.10.2'));
    const current = manifest(on('1.11.0'));
    const unknownVersion = manifest(on());

    // Assess
    expect(violations(old)).toEqual([
      [
        'spec.networkInterfaces',
        'unknown-field',
        expect.stringContaining(
          'added to the CRD in Karpenter v1.11.0; the CRD of Karpenter 1.10.2 installed here does not have it'
        ),
      ],
    ]);
    expect(violations(stored)).toEqual([
      [
        'spec.networkInterfaces',
        'unknown-field',
        expect.stringContaining(
          'the cluster stored it (its CRDs are newer), but the Karpenter 1.10.2 controller does not know the field'
        ),
      ],
    ]);
    expect(violations(current)).toEqual([]);
    expect(violations(unknownVersion)).toEqual([]);
  });
});

/** The NodeClass with `spec` evaluated at Karpenter `version` (the object's annotation). */
function evaluateAt(version: string | undefined, spec: Record<string, unknown>) {
  const annotations = version ? { 'nodeclass-scanner/karpenter-version': version } : {};
  return evaluateRaw(aNodeClassObject({ spec, metadata: { annotations } }));
}

const pathRules = (findings: readonly FindingDraft[]) =>
  violations(findings).map(([path, rule]) => `${path}#${rule}`);

// Each rule that changed between releases, probed on the last release without it and the first
// with it: [label, spec, last release before, path#rule there, first release, path#rule there].
const PROBES: readonly [string, Record<string, unknown>, string, string[], string, string[]][] = [
  [
    'amiFamily Windows2025',
    { amiFamily: 'Windows2025', amiSelectorTerms: [{ id: 'ami-0123abcd' }] },
    '1.8.8',
    ['spec.amiFamily#enum'],
    '1.9.0',
    [],
  ],
  [
    'a windows2025 alias',
    { amiSelectorTerms: [{ alias: 'windows2025@latest' }] },
    '1.8.8',
    ['spec.amiSelectorTerms[0].alias#alias-family'],
    '1.9.0',
    [],
  ],
  [
    'a windows2025 alias with amiFamily AL2023',
    { amiFamily: 'AL2023', amiSelectorTerms: [{ alias: 'windows2025@latest' }] },
    '1.8.8',
    ['spec.amiSelectorTerms[0].alias#alias-family'],
    '1.9.0',
    ['spec.amiFamily#alias-compatible-windows2025'],
  ],
  [
    'a capacity reservation term with only instanceMatchCriteria',
    { capacityReservationSelectorTerms: [{ instanceMatchCriteria: 'open' }] },
    '1.7.6',
    [
      'spec.capacityReservationSelectorTerms[0]#term-has-field',
      'spec.capacityReservationSelectorTerms[0].instanceMatchCriteria#unknown-field',
    ],
    '1.8.0',
    [],
  ],
  [
    'a capacity reservation term mixing id and instanceMatchCriteria',
    { capacityReservationSelectorTerms: [{ id: 'cr-0123abcd', instanceMatchCriteria: 'open' }] },
    '1.7.6',
    ['spec.capacityReservationSelectorTerms[0].instanceMatchCriteria#unknown-field'],
    '1.8.0',
    ['spec.capacityReservationSelectorTerms#id-exclusive'],
  ],
  [
    'instanceMatchCriteria outside its enum',
    { capacityReservationSelectorTerms: [{ tags: { a: 'b' }, instanceMatchCriteria: 'any' }] },
    '1.7.6',
    ['spec.capacityReservationSelectorTerms[0].instanceMatchCriteria#unknown-field'],
    '1.8.0',
    ['spec.capacityReservationSelectorTerms[0].instanceMatchCriteria#enum'],
  ],
  [
    'capacityReservationSelectorTerms',
    { capacityReservationSelectorTerms: [{ id: 'not-a-reservation' }] },
    '1.2.8',
    ['spec.capacityReservationSelectorTerms#unknown-field'],
    '1.3.0',
    ['spec.capacityReservationSelectorTerms[0].id#pattern'],
  ],
  [
    'an AMI term with only ssmParameter',
    { amiFamily: 'AL2023', amiSelectorTerms: [{ ssmParameter: '/my/ami' }] },
    '1.3.8',
    [
      'spec.amiSelectorTerms[0]#term-has-field',
      'spec.amiSelectorTerms[0].ssmParameter#unknown-field',
    ],
    '1.4.0',
    [],
  ],
  [
    'volumeInitializationRate without a snapshot',
    { blockDeviceMappings: [{ ebs: { volumeSize: '20Gi', volumeInitializationRate: 150 } }] },
    '1.4.4',
    ['spec.blockDeviceMappings[0].ebs.volumeInitializationRate#unknown-field'],
    '1.5.0',
    ['spec.blockDeviceMappings[0].ebs#snapshot-for-initialization-rate'],
  ],
  [
    'a negative ipPrefixCount',
    { ipPrefixCount: -1 },
    '1.7.6',
    ['spec.ipPrefixCount#unknown-field'],
    '1.8.0',
    ['spec.ipPrefixCount#minimum'],
  ],
  [
    'networkInterfaces without a primary interface',
    { networkInterfaces: [{ networkCardIndex: 0, deviceIndex: 1, interfaceType: 'efa-only' }] },
    '1.10.2',
    ['spec.networkInterfaces#unknown-field'],
    '1.11.0',
    ['spec.networkInterfaces#primary-interface'],
  ],
  [
    'placementGroupSelector with name and id',
    { placementGroupSelector: { name: 'pg', id: 'pg-0123abcd' } },
    '1.10.2',
    ['spec.placementGroupSelector#unknown-field'],
    '1.11.0',
    ['spec.placementGroupSelector#name-id-exclusive'],
  ],
  [
    'connectionTracking out of range',
    { connectionTracking: { udpTimeout: 10 } },
    '1.12.2',
    ['spec.connectionTracking#unknown-field'],
    '1.13.0',
    ['spec.connectionTracking.udpTimeout#minimum'],
  ],
  [
    'cpuOptions outside its enum',
    { cpuOptions: { nestedVirtualization: 'on' } },
    '1.12.2',
    ['spec.cpuOptions#unknown-field'],
    '1.13.0',
    ['spec.cpuOptions.nestedVirtualization#enum'],
  ],
];

describe('nodeclass-schema-valid: the built-in rules of each release', () => {
  it.each(PROBES)(
    '%s: before and from its release',
    (_label, spec, before, atBefore, from, atFrom) => {
      expect(pathRules(evaluateAt(before, spec))).toEqual(atBefore);
      expect(pathRules(evaluateAt(from, spec))).toEqual(atFrom);
    }
  );

  it('uses the newest release (v1.14.1) when the version is unknown, and says so', () => {
    const findings = evaluateAt(undefined, {
      amiFamily: 'Windows2025',
      amiSelectorTerms: [{ id: 'ami-0123abcd' }],
      connectionTracking: { udpTimeout: 10 },
    });
    expect(pathRules(findings)).toEqual(['spec.connectionTracking.udpTimeout#minimum']);
    expect(findings[0]?.evidence).toMatchObject({
      rules: expect.stringContaining(
        'built-in rules of the newest release, v1.14.1 (no CRD at hand'
      ),
      rulesRelease: 'Karpenter v1.14.1',
    });
  });

  it('names the release whose rules it used on every finding, pass included', () => {
    const failing = evaluateAt('1.8.3', { networkInterfaces: [] });
    expect(failing[0]?.evidence).toMatchObject({
      rules: "built-in rules of Karpenter v1.8.3's CRDs (no CRD at hand)",
    });
    const passing = evaluateAt('v1.11.0', {});
    expect(passing.map((finding) => finding.status)).toEqual(['pass']);
    expect(passing[0]?.evidence).toMatchObject({ rulesRelease: 'Karpenter v1.11.0' });
  });

  it("applies the main branch's rules to a version newer than every known release, and says so", () => {
    const findings = evaluateAt('1.15.0', { connectionTracking: { udpTimeout: 10 } });
    expect(pathRules(findings)).toEqual(['spec.connectionTracking.udpTimeout#minimum']);
    expect(String(findings[0]?.evidence?.rules)).toContain(
      "Karpenter v1.15.0 is newer than the newest release the scanner knows (v1.14.1): built-in rules of Karpenter's main branch after v1.14.1"
    );
  });

  it('words the selector exclusivity messages as each release does', () => {
    const spec = { subnetSelectorTerms: [{ id: 'subnet-0abc', tags: { a: 'b' } }] };
    expect(violations(evaluateAt('1.2.8', spec))).toEqual([
      [
        'spec.subnetSelectorTerms',
        'id-exclusive',
        "'id' is mutually exclusive, cannot be set with a combination of other fields in subnetSelectorTerms",
      ],
    ]);
    expect(violations(evaluateAt('1.3.0', spec))[0]?.[2]).toContain('in a subnet selector term');
    const reservations = {
      capacityReservationSelectorTerms: [{ id: 'cr-0abc', ownerID: '123456789012' }],
    };
    expect(violations(evaluateAt('1.7.6', reservations))[0]?.[2]).toBe(
      "'id' is mutually exclusive, cannot be set along with tags in a capacity reservation selector term"
    );
    expect(violations(evaluateAt('1.8.0', reservations))[0]?.[2]).toBe(
      "'id' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term"
    );
  });

  it('takes the rules of v1.0.0 for a version before the v1 API', () => {
    const findings = evaluateAt('0.37.0', {
      amiFamily: 'AL2023',
      amiSelectorTerms: [{ ssmParameter: '/x' }],
    });
    expect(pathRules(findings)).toContain('spec.amiSelectorTerms[0]#term-has-field');
    expect(String(findings[0]?.evidence?.rules)).toContain(
      'predates the v1 API: built-in rules of v1.0.0'
    );
  });
});

/** A verdict of the installed CRD, as the admission engine would hand it over. */
function aVerdict(overrides: Partial<AdmissionVerdict> = {}): AdmissionVerdict {
  return {
    crd: 'ec2nodeclasses.karpenter.k8s.aws from cluster prod',
    version: 'v1',
    violations: [],
    pruned: [],
    defaulted: {},
    openPaths: [],
    skippedTransitionRules: 0,
    ...overrides,
  };
}

function evaluateWithAdmission(raw: unknown, admission: AdmissionVerdict, version?: string) {
  return nodeClassSchemaValid.evaluate(
    emptyInventory({
      clusters: version
        ? [{ name: '', partition: 'aws', karpenterVersion: aKarpenterVersion(version) }]
        : [],
      nodeClasses: [{ ...aNodeClassEntry(raw), admission }],
    }),
    { now }
  );
}

describe('nodeclass-schema-valid: the installed CRD decides when the scan has it', () => {
  it("reports the CRD's violations with its own messages instead of the built-in rules", () => {
    // The built-in rules of v1.8.3 would reject Windows2025; this CRD says otherwise.
    const raw = aNodeClassObject({
      spec: { amiFamily: 'Windows2025', amiSelectorTerms: [{ id: 'ami-0123abcd' }] },
    });
    const admission = aVerdict({
      violations: [{ path: 'spec.role', rule: 'cel', message: 'a message of the CRD' }],
    });
    const findings = evaluateWithAdmission(raw, admission, '1.8.3');
    expect(violations(findings)).toEqual([['spec.role', 'cel', 'a message of the CRD']]);
    expect(findings[0]?.evidence).toMatchObject({
      crd: 'ec2nodeclasses.karpenter.k8s.aws from cluster prod',
      rules:
        'the installed CRD: ec2nodeclasses.karpenter.k8s.aws from cluster prod (served version v1)',
    });
  });

  it('reports pruned fields as unknown fields instead of the built-in field lists', () => {
    const raw = aNodeClassObject({ spec: { networkInterfaces: [], made: 'up' } });
    const findings = evaluateWithAdmission(raw, aVerdict({ pruned: ['spec.made'] }), '1.8.3');
    expect(pathRules(findings)).toEqual(['spec.made#unknown-field']);
    expect(findings[0]?.severity).toBe('high');
    expect(findings[0]?.message).toContain('not a field of the installed CRD');
  });

  it('passes what the CRD admits, saying so and counting skipped transition rules', () => {
    const raw = aNodeClassObject({ spec: { networkInterfaces: [] } });
    const findings = evaluateWithAdmission(raw, aVerdict({ skippedTransitionRules: 2 }), '1.8.3');
    expect(findings.map((finding) => finding.status)).toEqual(['pass']);
    expect(findings[0]?.message).toContain('the installed CRD admits it (2 transition rules');
  });

  it('leaves restricted spec.tags keys to tags-not-restricted', () => {
    const message = 'tag contains a restricted tag matching karpenter.sh/nodepool';
    const admission = aVerdict({ violations: [{ path: 'spec.tags', rule: 'cel', message }] });
    const findings = evaluateWithAdmission(aNodeClassObject(), admission);
    expect(findings.map((finding) => finding.status)).toEqual(['pass']);
  });

  it('still fails an object the scanner cannot read although the CRD admits it', () => {
    const raw = aNodeClassObject({ spec: { subnetSelectorTerms: 'all' } });
    const findings = evaluateWithAdmission(raw, aVerdict());
    expect(findings.map((finding) => finding.status)).toEqual(['fail']);
    expect(findings[0]?.evidence?.rule).toBe('type');
  });
});

describe('nodeclass-schema-valid: built-in rules as the API server applies them', () => {
  it('treats a declared field set to null as absent (Go clients send nil slices as null)', () => {
    expect(pathRules(evaluateAt('1.14.1', { capacityReservationSelectorTerms: null }))).toEqual([]);
  });

  it('still reports a field the release lacks when it is set to null (pruning comes first)', () => {
    expect(pathRules(evaluateAt('1.2.8', { capacityReservationSelectorTerms: null }))).toEqual([
      'spec.capacityReservationSelectorTerms#unknown-field',
    ]);
  });

  it('refuses an empty capacityReservationSelectorTerms list (the id rule is !self.all(…), true on [])', () => {
    expect(pathRules(evaluateAt('1.14.1', { capacityReservationSelectorTerms: [] }))).toEqual([
      'spec.capacityReservationSelectorTerms#id-exclusive',
    ]);
  });

  it('refuses a metadata.name that is not a DNS subdomain, as for every custom resource', () => {
    const findings = nodeClassSchemaValid.evaluate(
      anInventory([aNodeClassObject({ name: 'a'.repeat(254) })]),
      { now }
    );
    expect(violations(findings)).toEqual([
      [
        'metadata.name',
        'metadata-name',
        `Invalid value: "${'a'.repeat(254)}": must be no more than 253 characters`,
      ],
    ]);
  });
});

describe('nodeclass-schema-valid: the controller Deployment could not be read', () => {
  /** A field no release's CRD declares: the newest release's rules fail it. */
  const unknownField = aNodeClassObject({ spec: { made: 'up' } });
  const evaluateIn = (
    cluster: Partial<ClusterContext>,
    raw: unknown,
    admission?: AdmissionVerdict
  ) =>
    nodeClassSchemaValid.evaluate(
      emptyInventory({
        clusters: [{ name: 'prod', partition: 'aws', ...cluster }],
        nodeClasses: [{ ...aNodeClassEntry(raw, 'prod'), ...(admission ? { admission } : {}) }],
      }),
      { now }
    );
  const statuses = (findings: readonly FindingDraft[]) => findings.map((finding) => finding.status);

  it("reports an error with a read fault instead of the newest release's verdict", () => {
    const findings = evaluateIn({ state: aControllerUnreadState() }, unknownField);
    expect(statuses(findings)).toEqual(['error']);
    expect(findings[0]?.readFault).toEqual(CONTROLLER_UNREAD);
    expect(findings[0]?.causedBy?.checkId).toBe('scanner-can-read-cluster');
  });

  it('still reports what does not depend on the release: metadata.name', () => {
    const raw = aNodeClassObject({ name: 'Bad_Name', spec: { made: 'up' } });
    const findings = evaluateIn({ state: aControllerUnreadState() }, raw);
    expect(findings.map((finding) => [finding.status, finding.evidence?.rule])).toEqual([
      ['fail', 'metadata-name'],
      ['error', undefined],
    ]);
  });

  it('judges by a version given by the annotation or --karpenter-version, and by the installed CRD', () => {
    const annotated = aNodeClassObject({
      spec: { made: 'up' },
      metadata: { annotations: { 'nodeclass-scanner/karpenter-version': '1.14.1' } },
    });
    const state = aControllerUnreadState();
    const version = aKarpenterVersion('1.14.1');
    expect(pathRules(evaluateIn({ state }, annotated))).toEqual(['spec.made#unknown-field']);
    expect(pathRules(evaluateIn({ state, karpenterVersion: version }, unknownField))).toEqual([
      'spec.made#unknown-field',
    ]);
    const byCrd = evaluateIn({ state }, unknownField, aVerdict({ pruned: ['spec.made'] }));
    expect(pathRules(byCrd)).toEqual(['spec.made#unknown-field']);
    expect(byCrd[0]?.readFault).toBeUndefined();
  });

  it("without a version in a manifest scan, judges by the newest release's rules as before", () => {
    const findings = evaluateIn({}, unknownField);
    expect(pathRules(findings)).toEqual(['spec.made#unknown-field']);
    expect(findings.some((finding) => finding.readFault !== undefined)).toBe(false);
  });
});
