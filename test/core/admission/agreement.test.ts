// The two admission paths must decide alike: the built-in rules of a Karpenter release (the checks
// nodeclass-schema-valid, tags-not-restricted, kubelet-config-valid and nodepool-schema-valid with
// only the version known) and the CRD-driven engine evaluating a CRD that encodes the same release.
// The CRDs are written for this test (test/fixtures/crds/*.agreement.yaml, v1.14.1; the v1.8
// variants are derived below from what the release table in docs/admission-by-release.md lists).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createAdmissionEngines } from '../../../lambda/adapters/admission/engines.js';
import { compileCrdAdmission } from '../../../lambda/core/admission/evaluate.js';
import type { CrdAdmission } from '../../../lambda/core/admission/types.js';
import type { FindingDraft } from '../../../lambda/core/check.js';
import { kubeletConfigValid } from '../../../lambda/core/checks/kubelet-config-valid.js';
import { nodeClassSchemaValid } from '../../../lambda/core/checks/nodeclass-schema-valid.js';
import { nodePoolSchemaValid } from '../../../lambda/core/checks/nodepool-schema-valid.js';
import { tagsNotRestricted } from '../../../lambda/core/checks/tags-not-restricted.js';
import { emptyInventory } from '../../../lambda/core/inventory.js';
import { parseEC2NodeClass, parseNodePool } from '../../../lambda/core/schema.js';
import { aKarpenterVersion } from '../../support/builders.js';

type Json = Record<string, unknown>;
// biome-ignore lint/suspicious/noExplicitAny: CRD documents are walked and edited freely here.
type Doc = any;

const FIXTURES = join(import.meta.dirname, '../../fixtures/crds');
const now = new Date('2026-11-01T00:00:00Z');
const engines = createAdmissionEngines();

function load(file: string): Doc {
  return parse(readFileSync(join(FIXTURES, file), 'utf8'));
}

function schemaOf(crd: Doc): Doc {
  return crd.spec.versions[0].schema.openAPIV3Schema.properties.spec;
}

const WINDOWS2025 = /,? 'windows2025'/g;
const LABELS_AFTER_V1_8 = [
  'instance-tenancy',
  'capacity-reservation-interruptible',
  'placement-group-id',
  'placement-group-partition',
];

/** EC2NodeClass as of v1.8: no networkInterfaces, placementGroupSelector, connectionTracking, cpuOptions or Windows2025. */
function nodeClassAsOfV1_8(crd: Doc): Doc {
  const copy = structuredClone(crd);
  const spec = schemaOf(copy);
  for (const field of [
    'networkInterfaces',
    'placementGroupSelector',
    'connectionTracking',
    'cpuOptions',
  ]) {
    delete spec.properties[field];
  }
  spec.properties.amiFamily.enum = spec.properties.amiFamily.enum.filter(
    (family: string) => family !== 'Windows2025'
  );
  spec['x-kubernetes-validations'] = spec['x-kubernetes-validations'].filter(
    (rule: { rule: string }) => !rule.rule.includes("'windows2025'")
  );
  const alias = spec.properties.amiSelectorTerms.items.properties.alias;
  for (const rule of alias['x-kubernetes-validations'])
    rule.rule = rule.rule.replace(WINDOWS2025, '');
  return copy;
}

/** Before v1.9 a NodePool label in the kubernetes.io or k8s.io domains is refused, except these. */
const KUBERNETES_DOMAIN_RULES = [
  {
    rule: "[LABEL] in ['beta.kubernetes.io/instance-type', 'failure-domain.beta.kubernetes.io/region', 'beta.kubernetes.io/os', 'beta.kubernetes.io/arch', 'failure-domain.beta.kubernetes.io/zone', 'topology.kubernetes.io/zone', 'topology.kubernetes.io/region', 'node.kubernetes.io/instance-type', 'kubernetes.io/arch', 'kubernetes.io/os', 'node.kubernetes.io/windows-build'] || [LABEL].find('^([^/]+)').endsWith('node.kubernetes.io') || [LABEL].find('^([^/]+)').endsWith('node-restriction.kubernetes.io') || ![LABEL].find('^([^/]+)').endsWith('kubernetes.io')",
    message: 'the kubernetes.io domain',
  },
  {
    rule: "[LABEL].find('^([^/]+)').endsWith('kops.k8s.io') || ![LABEL].find('^([^/]+)').endsWith('k8s.io')",
    message: 'the k8s.io domain',
  },
];

/** NodePool as of v1.8: no Gte/Lte, no Balanced, reasons not a set, kubernetes.io domains closed, fewer AWS labels. */
function nodePoolAsOfV1_8(crd: Doc): Doc {
  const copy = structuredClone(crd);
  const spec = schemaOf(copy);
  const template = spec.properties.template.properties;
  const item = template.spec.properties.requirements.items;
  item.properties.operator.enum = item.properties.operator.enum.filter(
    (operator: string) => operator !== 'Gte' && operator !== 'Lte'
  );
  const disruption = spec.properties.disruption.properties;
  disruption.consolidationPolicy.enum = disruption.consolidationPolicy.enum.filter(
    (policy: string) => policy !== 'Balanced'
  );
  disruption.budgets.items.properties.reasons['x-kubernetes-list-type'] = 'atomic';
  const narrow = (rule: { rule: string }) => {
    for (const label of LABELS_AFTER_V1_8) rule.rule = rule.rule.replace(`, '${label}'`, '');
  };
  const key = item.properties.key;
  key['x-kubernetes-validations'].forEach(narrow);
  key['x-kubernetes-validations'].push(
    ...KUBERNETES_DOMAIN_RULES.map(({ rule, message }) => ({
      rule: rule.replaceAll('[LABEL]', 'self'),
      message,
    }))
  );
  const labels = template.metadata.properties.labels;
  labels['x-kubernetes-validations'].forEach(narrow);
  labels['x-kubernetes-validations'].push(
    ...KUBERNETES_DOMAIN_RULES.map(({ rule, message }) => ({
      rule: `self.all(k, ${rule.replaceAll('[LABEL]', 'k')})`,
      message,
    }))
  );
  return copy;
}

function compile(name: string, document: Doc): CrdAdmission {
  const compiled = compileCrdAdmission(
    { name, document, origin: { kind: 'file', location: 'agreement' } },
    engines
  );
  if ('error' in compiled) throw new Error(compiled.error);
  return compiled;
}

const nodeClassCrd = load('ec2nodeclasses.agreement.yaml');
const nodePoolCrd = load('nodepools.agreement.yaml');
const RELEASES = {
  '1.14.1': {
    nodeClass: compile('ec2nodeclasses.karpenter.k8s.aws', nodeClassCrd),
    nodePool: compile('nodepools.karpenter.sh', nodePoolCrd),
  },
  '1.8.3': {
    nodeClass: compile('ec2nodeclasses.karpenter.k8s.aws', nodeClassAsOfV1_8(nodeClassCrd)),
    nodePool: compile('nodepools.karpenter.sh', nodePoolAsOfV1_8(nodePoolCrd)),
  },
} as const;
type Release = keyof typeof RELEASES;

// ---------------------------------------------------------------------------------------------
// The corpus: valid objects and one mutation per row.

/** As read from YAML or JSON: `undefined` in a row means the field is absent. */
function asRead<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function nodeClass(spec: Json, metadata: Json = { name: 'demo' }): Json {
  return asRead({
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata,
    spec: {
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      role: 'KarpenterNodeRole',
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
      ...spec,
    },
  });
}

type Mutate = (spec: Json, template: Json, pool: Json) => void;

function nodePool(mutate: Mutate = () => {}): Json {
  const template: Json = {
    nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
    requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }],
  };
  const spec: Json = { template: { spec: template } };
  const pool: Json = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general' },
    spec,
  };
  mutate(spec, template, pool);
  return asRead(pool);
}

const many = <T>(count: number, item: (index: number) => T): T[] =>
  Array.from({ length: count }, (_, index) => item(index));
const tagsOf = (count: number) => Object.fromEntries(many(count, (i) => [`k${i}`, 'v']));
const nics = (...list: [number, number, string][]) =>
  list.map(([networkCardIndex, deviceIndex, interfaceType]) => ({
    networkCardIndex,
    deviceIndex,
    interfaceType,
  }));
const ebs = (block: Json, extra: Json = {}) => ({
  blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: block, ...extra }],
});

const ALIAS_FAMILIES: [string, string][] = [
  ['al2', 'AL2'],
  ['al2023', 'AL2023'],
  ['bottlerocket', 'Bottlerocket'],
  ['windows2019', 'Windows2019'],
  ['windows2022', 'Windows2022'],
  ['windows2025', 'Windows2025'],
];

const NODE_CLASS_SPECS: [string, Json][] = [
  ['valid', {}],
  ['instanceProfile instead of role', { role: undefined, instanceProfile: 'Profile' }],
  ['role and instanceProfile', { instanceProfile: 'Profile' }],
  ['neither role nor instanceProfile', { role: undefined }],
  ['empty role', { role: '' }],
  ['empty instanceProfile', { role: undefined, instanceProfile: '' }],
  ...ALIAS_FAMILIES.flatMap(([alias, family]): [string, Json][] => [
    [`${alias}@latest alone`, { amiSelectorTerms: [{ alias: `${alias}@latest` }] }],
    [`${alias} pinned`, { amiSelectorTerms: [{ alias: `${alias}@v20240625` }] }],
    [
      `${alias} with ${family}`,
      { amiFamily: family, amiSelectorTerms: [{ alias: `${alias}@latest` }] },
    ],
    [
      `${alias} with Custom`,
      { amiFamily: 'Custom', amiSelectorTerms: [{ alias: `${alias}@latest` }] },
    ],
    [`${alias} with AL2`, { amiFamily: 'AL2', amiSelectorTerms: [{ alias: `${alias}@latest` }] }],
    [
      `amiFamily ${family} with an id`,
      { amiFamily: family, amiSelectorTerms: [{ id: 'ami-0123' }] },
    ],
  ]),
  ['amiFamily Ubuntu', { amiFamily: 'Ubuntu', amiSelectorTerms: [{ id: 'ami-0123' }] }],
  ['no amiFamily without alias', { amiSelectorTerms: [{ id: 'ami-0123' }] }],
  ['alias family unknown', { amiSelectorTerms: [{ alias: 'ubuntu@latest' }] }],
  ['alias without version', { amiSelectorTerms: [{ alias: 'al2023@' }] }],
  ['alias without @', { amiSelectorTerms: [{ alias: 'al2023' }] }],
  ['alias uppercase', { amiSelectorTerms: [{ alias: 'AL2023@latest' }] }],
  ['alias 31 characters', { amiSelectorTerms: [{ alias: `al2023@${'v'.repeat(24)}` }] }],
  ['alias 30 characters', { amiSelectorTerms: [{ alias: `al2023@${'v'.repeat(23)}` }] }],
  ['alias unicode version', { amiSelectorTerms: [{ alias: 'al2023@é' }] }],
  ['windows alias pinned', { amiSelectorTerms: [{ alias: 'windows2022@v1' }] }],
  ['alias with another term', { amiSelectorTerms: [{ alias: 'al2023@latest' }, { id: 'ami-1' }] }],
  ['alias with id', { amiSelectorTerms: [{ alias: 'al2023@latest', id: 'ami-1' }] }],
  ['alias with owner', { amiSelectorTerms: [{ alias: 'al2023@latest', owner: 'amazon' }] }],
  ['id with name', { amiFamily: 'AL2023', amiSelectorTerms: [{ id: 'ami-1', name: 'n' }] }],
  ['id with tags', { amiFamily: 'AL2023', amiSelectorTerms: [{ id: 'ami-1', tags: { a: 'b' } }] }],
  ['id malformed', { amiFamily: 'AL2023', amiSelectorTerms: [{ id: 'ami_1' }] }],
  ['owner only', { amiFamily: 'AL2023', amiSelectorTerms: [{ owner: 'amazon' }] }],
  ['name and owner', { amiFamily: 'AL2023', amiSelectorTerms: [{ name: 'n', owner: 'self' }] }],
  ['ssmParameter only', { amiFamily: 'AL2023', amiSelectorTerms: [{ ssmParameter: '/a' }] }],
  ['empty AMI term', { amiFamily: 'AL2023', amiSelectorTerms: [{}] }],
  ['no AMI terms', { amiSelectorTerms: [] }],
  ['AMI terms missing', { amiSelectorTerms: undefined }],
  ['AMI terms null', { amiSelectorTerms: null }],
  [
    '31 AMI terms',
    { amiFamily: 'AL2023', amiSelectorTerms: many(31, (i) => ({ id: `ami-${i}` })) },
  ],
  ['AMI tag value empty', { amiFamily: 'AL2023', amiSelectorTerms: [{ tags: { a: '' } }] }],
  ['no subnet terms', { subnetSelectorTerms: [] }],
  ['subnet terms missing', { subnetSelectorTerms: undefined }],
  ['empty subnet term', { subnetSelectorTerms: [{}] }],
  ['subnet by id', { subnetSelectorTerms: [{ id: 'subnet-0123' }] }],
  ['subnet id unanchored match', { subnetSelectorTerms: [{ id: 'xsubnet-1' }] }],
  ['subnet id uppercase', { subnetSelectorTerms: [{ id: 'subnet-ABC' }] }],
  ['subnet id with tags', { subnetSelectorTerms: [{ id: 'subnet-1', tags: { a: 'b' } }] }],
  [
    'one of two subnet terms mixing',
    { subnetSelectorTerms: [{ id: 'subnet-1', tags: { a: 'b' } }, { tags: { a: 'b' } }] },
  ],
  ['subnet tag key empty', { subnetSelectorTerms: [{ tags: { '': 'b' } }] }],
  ['21 subnet tags', { subnetSelectorTerms: [{ tags: tagsOf(21) }] }],
  ['31 subnet terms', { subnetSelectorTerms: many(31, (i) => ({ id: `subnet-${i}` })) }],
  ['security group by name', { securityGroupSelectorTerms: [{ name: 'sg' }] }],
  ['security group id with name', { securityGroupSelectorTerms: [{ id: 'sg-1', name: 'a' }] }],
  [
    'security group name with tags',
    { securityGroupSelectorTerms: [{ name: 'a', tags: { a: 'b' } }] },
  ],
  [
    'security groups both mixing',
    {
      securityGroupSelectorTerms: [
        { id: 'sg-1', name: 'a' },
        { id: 'sg-2', tags: { a: 'b' } },
      ],
    },
  ],
  ['security group id malformed', { securityGroupSelectorTerms: [{ id: 'sg-' }] }],
  ['no security group terms', { securityGroupSelectorTerms: [] }],
  ['capacity reservation by id', { capacityReservationSelectorTerms: [{ id: 'cr-0123' }] }],
  [
    'capacity reservation by tags and owner',
    { capacityReservationSelectorTerms: [{ tags: { a: 'b' }, ownerID: '123456789012' }] },
  ],
  [
    'capacity reservation owner only',
    { capacityReservationSelectorTerms: [{ ownerID: '123456789012' }] },
  ],
  [
    'capacity reservation owner malformed',
    { capacityReservationSelectorTerms: [{ tags: { a: 'b' }, ownerID: '1234' }] },
  ],
  ['capacity reservation id malformed', { capacityReservationSelectorTerms: [{ id: 'r-1' }] }],
  [
    'capacity reservation id with tags',
    { capacityReservationSelectorTerms: [{ id: 'cr-1', tags: { a: 'b' } }] },
  ],
  [
    'capacity reservation id mixed in one of two',
    { capacityReservationSelectorTerms: [{ id: 'cr-1', tags: { a: 'b' } }, { tags: { a: 'b' } }] },
  ],
  ['capacity reservation terms empty', { capacityReservationSelectorTerms: [] }],
  ['capacity reservation terms null', { capacityReservationSelectorTerms: null }],
  [
    'instanceMatchCriteria only',
    { capacityReservationSelectorTerms: [{ instanceMatchCriteria: 'open' }] },
  ],
  [
    'instanceMatchCriteria invalid',
    { capacityReservationSelectorTerms: [{ instanceMatchCriteria: 'any' }] },
  ],
  [
    'instanceMatchCriteria with id',
    { capacityReservationSelectorTerms: [{ id: 'cr-1', instanceMatchCriteria: 'targeted' }] },
  ],
  ['spec tags', { tags: { team: 'a', Name: 'n' } }],
  ['spec tag key empty', { tags: { '': 'v' } }],
  ...[
    'eks:eks-cluster-name',
    'karpenter.sh/nodepool',
    'karpenter.sh/nodeclaim',
    'karpenter.k8s.aws/ec2nodeclass',
    'kubernetes.io/cluster/demo',
    'kubernetes.io/clusterx',
  ].map((key): [string, Json] => [`restricted tag ${key}`, { tags: { [key]: 'v' } }]),
  ['tag karpenter.sh/nodepoolx', { tags: { 'karpenter.sh/nodepoolx': 'v' } }],
  ['placement group by name', { placementGroupSelector: { name: 'pg' } }],
  ['placement group by id', { placementGroupSelector: { id: 'pg-0123' } }],
  ['placement group empty', { placementGroupSelector: {} }],
  ['placement group name and id', { placementGroupSelector: { name: 'a', id: 'pg-1' } }],
  ['placement group id malformed', { placementGroupSelector: { id: 'bad' } }],
  ['placement group name empty', { placementGroupSelector: { name: '' } }],
  ['volumeSize 20Gi', ebs({ volumeSize: '20Gi', volumeType: 'gp3' })],
  ...[
    '59000Gi',
    '59001Gi',
    '64000G',
    '64001G',
    '58Ti',
    '59Ti',
    '64T',
    '65T',
    'Ti',
    'T',
    '0',
    '1m',
    '100T',
  ].map((size): [string, Json] => [`volumeSize ${size}`, ebs({ volumeSize: size })]),
  ['volumeSize a number', ebs({ volumeSize: 20 })],
  ['volumeType gp4', ebs({ volumeSize: '20Gi', volumeType: 'gp4' })],
  ['ebs without size or snapshot', ebs({ volumeType: 'gp3' })],
  ['ebs from a snapshot', ebs({ snapshotID: 'snap-1' })],
  [
    'initialization rate with snapshot',
    ebs({ snapshotID: 'snap-1', volumeInitializationRate: 200 }),
  ],
  [
    'initialization rate without snapshot',
    ebs({ volumeSize: '20Gi', volumeInitializationRate: 200 }),
  ],
  [
    'initialization rate with empty snapshot',
    ebs({ snapshotID: '', volumeInitializationRate: 200 }),
  ],
  ['initialization rate 99', ebs({ snapshotID: 'snap-1', volumeInitializationRate: 99 })],
  ['initialization rate 301', ebs({ snapshotID: 'snap-1', volumeInitializationRate: 301 })],
  ['iops a string', ebs({ volumeSize: '20Gi', iops: '3000' })],
  ['rootVolume a string', ebs({ volumeSize: '20Gi' }, { rootVolume: 'true' })],
  [
    'two root volumes',
    {
      blockDeviceMappings: many(2, (i) => ({
        deviceName: `d${i}`,
        rootVolume: true,
        ebs: { volumeSize: '20Gi' },
      })),
    },
  ],
  [
    'two non-root volumes',
    {
      blockDeviceMappings: many(2, (i) => ({
        deviceName: `d${i}`,
        rootVolume: false,
        ebs: { volumeSize: '20Gi' },
      })),
    },
  ],
  [
    '51 block devices',
    {
      blockDeviceMappings: many(51, (i) => ({ deviceName: `d${i}`, ebs: { volumeSize: '20Gi' } })),
    },
  ],
  [
    'metadata options',
    {
      metadataOptions: {
        httpEndpoint: 'disabled',
        httpProtocolIPv6: 'enabled',
        httpPutResponseHopLimit: 64,
        httpTokens: 'optional',
      },
    },
  ],
  ['hop limit 0', { metadataOptions: { httpPutResponseHopLimit: 0 } }],
  ['hop limit 65', { metadataOptions: { httpPutResponseHopLimit: 65 } }],
  ['hop limit a string', { metadataOptions: { httpPutResponseHopLimit: '2' } }],
  ['httpTokens invalid', { metadataOptions: { httpTokens: 'sometimes' } }],
  ['httpEndpoint invalid', { metadataOptions: { httpEndpoint: 'on' } }],
  [
    'network interfaces',
    { networkInterfaces: nics([0, 0, 'interface'], [0, 1, 'efa-only'], [1, 0, 'efa-only']) },
  ],
  ['network interfaces empty', { networkInterfaces: [] }],
  ['no primary interface', { networkInterfaces: nics([0, 1, 'interface']) }],
  ['EFA primary', { networkInterfaces: nics([0, 0, 'efa-only']) }],
  [
    'slot used twice',
    { networkInterfaces: nics([0, 0, 'interface'], [1, 0, 'interface'], [1, 0, 'efa-only']) },
  ],
  [
    'two EFA on one card',
    { networkInterfaces: nics([0, 0, 'interface'], [1, 0, 'efa-only'], [1, 1, 'efa-only']) },
  ],
  ['negative card index', { networkInterfaces: nics([0, 0, 'interface'], [-1, 0, 'interface']) }],
  ['interface type efa', { networkInterfaces: nics([0, 0, 'efa']) }],
  ['interface type missing', { networkInterfaces: [{ networkCardIndex: 0, deviceIndex: 0 }] }],
  [
    'card index a string',
    { networkInterfaces: [{ networkCardIndex: '0', deviceIndex: 0, interfaceType: 'interface' }] },
  ],
  [
    '151 interfaces',
    {
      networkInterfaces: many(151, (i) => ({
        networkCardIndex: i,
        deviceIndex: 0,
        interfaceType: 'interface',
      })),
    },
  ],
  [
    'connection tracking',
    { connectionTracking: { tcpEstablishedTimeout: 432000, udpStreamTimeout: 60, udpTimeout: 30 } },
  ],
  ['connection tracking empty', { connectionTracking: {} }],
  ['tcpEstablishedTimeout 59', { connectionTracking: { tcpEstablishedTimeout: 59 } }],
  ['udpStreamTimeout 181', { connectionTracking: { udpStreamTimeout: 181 } }],
  ['udpTimeout 61', { connectionTracking: { udpTimeout: 61 } }],
  ['udpTimeout a string', { connectionTracking: { udpTimeout: '45' } }],
  ['nested virtualization', { cpuOptions: { nestedVirtualization: 'enabled' } }],
  ['nested virtualization invalid', { cpuOptions: { nestedVirtualization: 'on' } }],
  ['nested virtualization a number', { cpuOptions: { nestedVirtualization: 1 } }],
  ['cpuOptions empty', { cpuOptions: {} }],
  ['ipPrefixCount 2', { ipPrefixCount: 2 }],
  ['ipPrefixCount -1', { ipPrefixCount: -1 }],
  ['ipPrefixCount a string', { ipPrefixCount: '2' }],
  ['instanceStorePolicy RAID0', { instanceStorePolicy: 'RAID0' }],
  ['instanceStorePolicy RAID1', { instanceStorePolicy: 'RAID1' }],
  ['detailedMonitoring a string', { detailedMonitoring: 'true' }],
  ['associatePublicIPAddress a string', { associatePublicIPAddress: 'yes' }],
  ['userData a number', { userData: 1 }],
  ['unknown spec field', { launchTemplate: 'lt' }],
  ['unknown term field', { subnetSelectorTerms: [{ tags: { a: 'b' }, name: 'x' }] }],
  // spec.kubelet (typed by both releases' CRDs)
  [
    'kubelet',
    {
      kubelet: {
        maxPods: 110,
        podsPerCore: 0,
        clusterDNS: ['10.0.0.10'],
        cpuCFSQuota: true,
        kubeReserved: { cpu: '100m', memory: '1.5Gi' },
        systemReserved: { 'ephemeral-storage': '1Gi' },
        evictionMaxPodGracePeriod: 60,
      },
    },
  ],
  ['kubelet empty', { kubelet: {} }],
  ['kubelet maxPods expression', { kubelet: { maxPods: 'vcpus * 10' } }],
  ['kubelet maxPods -1', { kubelet: { maxPods: -1 } }],
  ['kubelet maxPods 1.5', { kubelet: { maxPods: 1.5 } }],
  [
    'kubelet registerWithTaints',
    { kubelet: { registerWithTaints: [{ key: 'a', effect: 'NoSchedule' }] } },
  ],
  ['kubelet clusterDNS a string', { kubelet: { clusterDNS: '10.0.0.10' } }],
  ['kubelet cpuCFSQuota a string', { kubelet: { cpuCFSQuota: 'true' } }],
  ['kubelet kubeReserved pods', { kubelet: { kubeReserved: { pods: '2' } } }],
  ['kubelet systemReserved negative', { kubelet: { systemReserved: { cpu: '-1' } } }],
  ['kubelet kubeReserved bad quantity', { kubelet: { kubeReserved: { cpu: '1x' } } }],
  ['kubelet kubeReserved a number', { kubelet: { kubeReserved: { cpu: 1 } } }],
  ...[
    '5%',
    '5.5%',
    '100%',
    '100.00%',
    '',
    '1Gi',
    '1e3',
    '5%3',
    '110%',
    '100.1%',
    '110GB',
    '-1',
  ].map((threshold): [string, Json] => [
    `evictionHard ${threshold || 'empty'}`,
    { kubelet: { evictionHard: { 'memory.available': threshold } } },
  ]),
  ['evictionHard signal unknown', { kubelet: { evictionHard: { memory: '5%' } } }],
  [
    'evictionSoft with grace period',
    {
      kubelet: {
        evictionSoft: { 'memory.available': '5%' },
        evictionSoftGracePeriod: { 'memory.available': '1m0s' },
      },
    },
  ],
  [
    'evictionSoft without grace period',
    { kubelet: { evictionSoft: { 'memory.available': '5%' } } },
  ],
  [
    'grace period without evictionSoft',
    { kubelet: { evictionSoftGracePeriod: { 'memory.available': '1m' } } },
  ],
  [
    'grace period for another signal',
    {
      kubelet: {
        evictionSoft: { 'memory.available': '5%' },
        evictionSoftGracePeriod: { 'nodefs.available': '1m' },
      },
    },
  ],
  [
    'grace period signal unknown',
    { kubelet: { evictionSoft: { memory: '5%' }, evictionSoftGracePeriod: { memory: '1m' } } },
  ],
  [
    'image GC high below low',
    { kubelet: { imageGCHighThresholdPercent: 50, imageGCLowThresholdPercent: 60 } },
  ],
  [
    'image GC high equal to low',
    { kubelet: { imageGCHighThresholdPercent: 50, imageGCLowThresholdPercent: 50 } },
  ],
  [
    'image GC high above low',
    { kubelet: { imageGCHighThresholdPercent: 85, imageGCLowThresholdPercent: 80 } },
  ],
  ['image GC high 101', { kubelet: { imageGCHighThresholdPercent: 101 } }],
  ['evictionMaxPodGracePeriod a string', { kubelet: { evictionMaxPodGracePeriod: '30' } }],
];

const NO_SPEC = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'e' },
};

const NODE_CLASS_OBJECTS: [string, Json][] = [
  ...NODE_CLASS_SPECS.map(([label, spec]): [string, Json] => [label, nodeClass(spec)]),
  ['name not a DNS subdomain', nodeClass({}, { name: 'Bad_Name' })],
  ['name of 254 characters', nodeClass({}, { name: 'a'.repeat(254) })],
  [
    'status on create',
    { ...nodeClass({}), status: { conditions: [{ type: 'Ready', status: 'True' }] } },
  ],
  ['named by generateName alone', nodeClass({}, { generateName: 'demo-' })],
  ['neither name nor generateName', nodeClass({}, {})],
  // Admitted (the CRD requires no spec); Karpenter cannot use it: a spec-missing fail, not a refusal.
  ['no spec', { ...NO_SPEC }],
  ['spec null', { ...NO_SPEC, spec: null }],
  ['v1beta1', { ...nodeClass({}), apiVersion: 'karpenter.k8s.aws/v1beta1' }],
];

const req =
  (key: string, operator = 'In', values: string[] | undefined = ['x'], extra: Json = {}): Mutate =>
  (_spec, template) => {
    template.requirements = [{ key, operator, ...(values ? { values } : {}), ...extra }];
  };
const labels =
  (map: Json): Mutate =>
  (spec) => {
    (spec.template as Json).metadata = { labels: map };
  };
const disruption =
  (value: Json): Mutate =>
  (spec) => {
    spec.disruption = value;
  };
const budget = (value: Json): Mutate => disruption({ consolidateAfter: '0s', budgets: [value] });
const taints =
  (...list: Json[]): Mutate =>
  (_spec, template) => {
    template.taints = list;
  };

const LABEL_KEYS = [
  'team',
  'example.com/team',
  'karpenter.sh/capacity-type',
  'karpenter.sh/nodepool',
  'karpenter.sh/custom',
  'sub.karpenter.sh/x',
  'kubernetes.io/hostname',
  'kubernetes.io/arch',
  'kubernetes.io/custom',
  'sub.kubernetes.io/custom',
  'node.kubernetes.io/instance-type',
  'x.node-restriction.kubernetes.io/a',
  'beta.kubernetes.io/arch',
  'topology.kubernetes.io/zone',
  'k8s.io/custom',
  'kops.k8s.io/instancegroup',
  'x.kops.k8s.io/a',
  'topology.k8s.aws/zone-id',
  'karpenter.k8s.aws/instance-family',
  'karpenter.k8s.aws/instance-tenancy',
  'karpenter.k8s.aws/capacity-reservation-interruptible',
  'karpenter.k8s.aws/placement-group-id',
  'karpenter.k8s.aws/nitro-sandbox',
  'karpenter.k8s.aws/unknown',
  'x.karpenter.k8s.aws/instance-family',
  'Test.com/test',
  'test/test/test',
  '/test',
  'karpenter.sh',
];

const NODE_POOL_MUTATIONS: [string, Mutate][] = [
  ['valid', () => {}],
  ...LABEL_KEYS.flatMap((key): [string, Mutate][] => [
    [`requirement ${key}`, req(key)],
    [`label ${key}`, labels({ [key]: 'x' })],
  ]),
  [
    'requirement key of 317 characters',
    req(`${'a'.repeat(250)}.com/${'b'.repeat(62)}`, 'Exists', undefined),
  ],
  [
    '101 requirements',
    (_s, t) => {
      t.requirements = many(101, (i) => ({ key: `k${i}`, operator: 'Exists' }));
    },
  ],
  [
    'no requirements',
    (_s, t) => {
      t.requirements = [];
    },
  ],
  [
    'requirements missing',
    (_s, t) => {
      delete t.requirements;
    },
  ],
  ['operator unknown', req('team', 'Within')],
  ['operator lowercase', req('team', 'in')],
  ['In without values', req('team', 'In', undefined)],
  ['In with empty values', req('team', 'In', [])],
  ['NotIn without values', req('team', 'NotIn', undefined)],
  ['Exists with values', req('team', 'Exists', ['x'])],
  ...['Gt', 'Lt', 'Gte', 'Lte'].flatMap((operator): [string, Mutate][] =>
    [
      ['1'],
      ['+1'],
      ['01'],
      ['-0'],
      ['-1'],
      ['a'],
      ['1.5'],
      [''],
      ['1', '2'],
      [],
      ['9223372036854775807'],
      ['9223372036854775808'],
    ].map((values): [string, Mutate] => [
      `${operator} ${JSON.stringify(values)}`,
      req('karpenter.k8s.aws/instance-cpu', operator, values),
    ])
  ),
  ['value with a space', req('team', 'In', ['a b'])],
  ['value of 64 characters', req('team', 'In', ['v'.repeat(64)])],
  [
    'minValues 2 of 3',
    req('node.kubernetes.io/instance-type', 'In', ['a', 'b', 'c'], { minValues: 2 }),
  ],
  [
    'minValues above the values',
    req('node.kubernetes.io/instance-type', 'In', ['a'], { minValues: 2 }),
  ],
  [
    'minValues counting duplicates',
    req('node.kubernetes.io/instance-type', 'In', ['a', 'a'], { minValues: 2 }),
  ],
  [
    'minValues with NotIn',
    req('node.kubernetes.io/instance-type', 'NotIn', ['a'], { minValues: 2 }),
  ],
  [
    'minValues with Exists',
    req('node.kubernetes.io/instance-type', 'Exists', undefined, { minValues: 2 }),
  ],
  ['minValues 0', req('node.kubernetes.io/instance-type', 'Exists', undefined, { minValues: 0 })],
  ['minValues 51', req('node.kubernetes.io/instance-type', 'Exists', undefined, { minValues: 51 })],
  ['label value with a slash', labels({ team: 'a/b' })],
  ['label value of 64 characters', labels({ team: 'v'.repeat(64) })],
  ['label value a number', labels({ team: 1 })],
  ['label key with spaces', labels({ 'spaces are allowed': 'x' })],
  ['101 labels', labels(Object.fromEntries(many(101, (i) => [`k${i}`, 'v'])))],
  [
    'annotations',
    (s) => {
      (s.template as Json).metadata = { annotations: { 'example.com/a': 'b' } };
    },
  ],
  [
    'taints',
    taints(
      { key: 'a', value: 'b', effect: 'NoSchedule' },
      { key: 'example.com/Test', effect: 'NoExecute', timeAdded: '2024-01-01T10:00:00Z' }
    ),
  ],
  ['taint key empty', taints({ key: '', effect: 'NoSchedule' })],
  ['taint key invalid', taints({ key: 'test/test/test', effect: 'NoSchedule' })],
  ['taint value invalid', taints({ key: 'a', value: '???', effect: 'NoSchedule' })],
  ['taint effect invalid', taints({ key: 'a', effect: 'Never' })],
  ['taint effect missing', taints({ key: 'a' })],
  [
    'taint timeAdded not a time',
    taints({ key: 'a', effect: 'NoSchedule', timeAdded: 'yesterday' }),
  ],
  [
    'startup taint',
    (_s, t) => {
      t.startupTaints = [{ key: 'example.com/init', value: 'true', effect: 'NoSchedule' }];
    },
  ],
  [
    'startup taint invalid effect',
    (_s, t) => {
      t.startupTaints = [{ key: 'a', effect: 'x' }];
    },
  ],
  [
    'nodeClassRef group empty',
    (_s, t) => {
      (t.nodeClassRef as Json).group = '';
    },
  ],
  [
    'nodeClassRef kind empty',
    (_s, t) => {
      (t.nodeClassRef as Json).kind = '';
    },
  ],
  [
    'nodeClassRef name empty',
    (_s, t) => {
      (t.nodeClassRef as Json).name = '';
    },
  ],
  [
    'nodeClassRef group with a slash',
    (_s, t) => {
      (t.nodeClassRef as Json).group = 'a/b';
    },
  ],
  [
    'nodeClassRef name missing',
    (_s, t) => {
      delete (t.nodeClassRef as Json).name;
    },
  ],
  [
    'nodeClassRef missing',
    (_s, t) => {
      delete t.nodeClassRef;
    },
  ],
  ...['720h', 'Never', '1h30m5s', '0s', '-1s', '1hr', '1d', 'FooNever', '10sfoo', ''].flatMap(
    (value): [string, Mutate][] => [
      [
        `expireAfter ${value || 'empty'}`,
        (_s, t) => {
          t.expireAfter = value;
        },
      ],
      [`consolidateAfter ${value || 'empty'}`, disruption({ consolidateAfter: value })],
      [
        `terminationGracePeriod ${value || 'empty'}`,
        (_s, t) => {
          t.terminationGracePeriod = value;
        },
      ],
    ]
  ),
  ...['WhenEmpty', 'WhenEmptyOrUnderutilized', 'Balanced', 'WhenUnderutilized', ''].map(
    (policy): [string, Mutate] => [
      `consolidationPolicy ${policy || 'empty'}`,
      disruption({ consolidateAfter: '30s', consolidationPolicy: policy }),
    ]
  ),
  ['disruption without consolidateAfter', disruption({ consolidationPolicy: 'WhenEmpty' })],
  ['disruption empty', disruption({})],
  ...['10', '10%', '100%', '101%', '1000%', '-10', '0', ''].map((nodes): [string, Mutate] => [
    `budget nodes ${nodes || 'empty'}`,
    budget({ nodes }),
  ]),
  ['budget nodes a number', budget({ nodes: 10 })],
  ['budget nodes missing', budget({})],
  ...[
    '* * * * *',
    '0 9 * * mon-fri',
    '@annually',
    '@hourlyx',
    'x@hourly',
    '*',
    '* * * * ',
    '* * * *\u00a0*',
    '* * * *\u000b*',
    '* * * *\t*',
  ].map((schedule): [string, Mutate] => [
    `budget schedule ${JSON.stringify(schedule)}`,
    budget({ nodes: '1', schedule, duration: '10m' }),
  ]),
  ...['20m', '20m0s', '2h20m', '2h20m0s', '8h0m0s', '30s', '-20m', '1h30', ''].map(
    (duration): [string, Mutate] => [
      `budget duration ${duration || 'empty'}`,
      budget({ nodes: '1', schedule: '@daily', duration }),
    ]
  ),
  ['budget schedule without duration', budget({ nodes: '1', schedule: '@daily' })],
  ['budget duration without schedule', budget({ nodes: '1', duration: '10m' })],
  ['budget reasons', budget({ nodes: '1', reasons: ['Drifted', 'Empty', 'Underutilized'] })],
  ['budget reason invalid', budget({ nodes: '1', reasons: ['Expired'] })],
  ['budget reasons duplicated', budget({ nodes: '1', reasons: ['Empty', 'Empty'] })],
  ['51 budget reasons', budget({ nodes: '1', reasons: many(51, () => 'Empty') })],
  ['51 budgets', disruption({ consolidateAfter: '0s', budgets: many(51, () => ({ nodes: '1' })) })],
  ...['1000', '1k', '2000Gi', '1.5', 'abc', '-1'].map((limit): [string, Mutate] => [
    `limit ${limit}`,
    (s) => {
      s.limits = { cpu: limit };
    },
  ]),
  [
    'limit an integer',
    (s) => {
      s.limits = { cpu: 10 };
    },
  ],
  [
    'limit a fraction',
    (s) => {
      s.limits = { cpu: 1.5 };
    },
  ],
  ...[1, 100, 0, 101].map((weight): [string, Mutate] => [
    `weight ${weight}`,
    (s) => {
      s.weight = weight;
    },
  ]),
  [
    'weight a string',
    (s) => {
      s.weight = '10';
    },
  ],
  [
    'replicas',
    (s) => {
      s.replicas = 3;
    },
  ],
  [
    'replicas 0',
    (s) => {
      s.replicas = 0;
    },
  ],
  [
    'replicas -1',
    (s) => {
      s.replicas = -1;
    },
  ],
  [
    'replicas with a nodes limit',
    (s) => {
      s.replicas = 3;
      s.limits = { nodes: '10' };
    },
  ],
  [
    'replicas with a cpu limit',
    (s) => {
      s.replicas = 3;
      s.limits = { cpu: '10' };
    },
  ],
  [
    'replicas with empty limits',
    (s) => {
      s.replicas = 3;
      s.limits = {};
    },
  ],
  [
    'replicas with weight',
    (s) => {
      s.replicas = 3;
      s.weight = 10;
    },
  ],
  [
    'unknown spec field',
    (s) => {
      s.kubelet = { maxPods: 10 };
    },
  ],
  [
    'v1beta1 kubelet on the template',
    (_s, t) => {
      t.kubelet = { maxPods: 10 };
    },
  ],
  [
    'name not a DNS subdomain',
    (_s, _t, pool) => {
      pool.metadata = { name: 'Bad_Name' };
    },
  ],
  [
    'named by generateName alone',
    (_s, _t, pool) => {
      pool.metadata = { generateName: 'general-' };
    },
  ],
  [
    'neither name nor generateName',
    (_s, _t, pool) => {
      pool.metadata = {};
    },
  ],
  [
    'v1beta1',
    (_s, _t, pool) => {
      pool.apiVersion = 'karpenter.sh/v1beta1';
    },
  ],
];

// ---------------------------------------------------------------------------------------------
// The two paths

/** Fails of objects the API server admits: ignored values, scanner annotations, no spec. */
const NOT_ADMISSION = new Set(['values-ignored', 'context-annotation', 'spec-missing']);

/** Paths of the failures the built-in rules report (the object's whole path when it does not parse). */
function builtInPaths(findings: readonly FindingDraft[]): string[] {
  return findings
    .filter((finding) => finding.status === 'fail')
    .filter((finding) => !NOT_ADMISSION.has(String(finding.evidence?.rule)))
    .map((finding) => String(finding.evidence?.path ?? finding.location?.path ?? ''));
}

function builtInNodeClass(release: Release, object: Json): string[] {
  const inventory = emptyInventory({
    inputs: new Set(['spec']),
    clusters: [{ name: '', partition: 'aws', karpenterVersion: aKarpenterVersion(release) }],
    nodeClasses: [
      {
        cluster: '',
        name: 'demo',
        apiVersion: String(object.apiVersion),
        raw: object,
        parsed: parseEC2NodeClass(object),
      },
    ],
  });
  return [nodeClassSchemaValid, tagsNotRestricted, kubeletConfigValid].flatMap((check) =>
    builtInPaths(check.evaluate(inventory, { now }))
  );
}

function builtInNodePool(release: Release, object: Json): string[] {
  const inventory = emptyInventory({
    inputs: new Set(['spec']),
    clusters: [{ name: '', partition: 'aws', karpenterVersion: aKarpenterVersion(release) }],
    nodePools: [{ cluster: '', name: 'general', raw: object, parsed: parseNodePool(object) }],
  });
  return builtInPaths(nodePoolSchemaValid.evaluate(inventory, { now }));
}

/** Violations and pruned fields (kubectl's strict field validation refuses both). */
function enginePaths(admission: CrdAdmission, object: Json): string[] {
  const verdict = admission.review(object);
  return [...verdict.violations.map((violation) => violation.path), ...verdict.pruned];
}

/** One path names the other's field, or a field above or below it ('' and "(object)": the whole object). */
function related(left: string, right: string): boolean {
  if (left === '' || right === '' || left === '(object)' || right === '(object)') return true;
  const within = (outer: string, inner: string) =>
    inner === outer || inner.startsWith(`${outer}.`) || inner.startsWith(`${outer}[`);
  return within(left, right) || within(right, left);
}

interface Outcome {
  readonly builtIn: string[];
  readonly engine: string[];
}

/** What differs, or undefined when both admit, or both reject naming related fields. */
function disagreement({ builtIn, engine }: Outcome): string | undefined {
  if (builtIn.length === 0 && engine.length === 0) return undefined;
  if (builtIn.length === 0 || engine.length === 0) {
    return builtIn.length === 0
      ? `only the engine rejects (${engine})`
      : `only the built-in rules reject (${builtIn})`;
  }
  const unmatched = [
    ...builtIn
      .filter((path) => !engine.some((other) => related(path, other)))
      .map((path) => `built-in ${path}`),
    ...engine
      .filter((path) => !builtIn.some((other) => related(path, other)))
      .map((path) => `engine ${path}`),
  ];
  return unmatched.length === 0 ? undefined : `paths differ: ${unmatched.join(', ')}`;
}

const releases = Object.keys(RELEASES) as Release[];

describe('admission agreement: built-in rules and the CRD engine decide alike', () => {
  it.each(releases)('EC2NodeClass corpus at v%s', (release) => {
    const differences = NODE_CLASS_OBJECTS.flatMap(([label, object]) => {
      const why = disagreement({
        builtIn: builtInNodeClass(release, object),
        engine: enginePaths(RELEASES[release].nodeClass, object),
      });
      return why === undefined ? [] : [`${label}: ${why}`];
    });
    expect(differences).toEqual([]);
  });

  it.each(releases)('NodePool corpus at v%s', (release) => {
    const differences = NODE_POOL_MUTATIONS.flatMap(([label, mutate]) => {
      const object = nodePool(mutate);
      const why = disagreement({
        builtIn: builtInNodePool(release, object),
        engine: enginePaths(RELEASES[release].nodePool, object),
      });
      return why === undefined ? [] : [`${label}: ${why}`];
    });
    expect(differences).toEqual([]);
  });

  it('the corpus is not one-sided: each kind has objects admitted and refused at both releases, and rows whose verdict changes between them', () => {
    const verdicts = (release: Release) => ({
      nodeClass: NODE_CLASS_OBJECTS.map(
        ([, object]) => builtInNodeClass(release, object).length > 0
      ),
      nodePool: NODE_POOL_MUTATIONS.map(
        ([, mutate]) => builtInNodePool(release, nodePool(mutate)).length > 0
      ),
    });
    const newest = verdicts('1.14.1');
    const older = verdicts('1.8.3');
    for (const kind of ['nodeClass', 'nodePool'] as const) {
      for (const side of [newest, older]) {
        expect(side[kind].filter(Boolean).length).toBeGreaterThan(20);
        expect(side[kind].filter((rejected) => !rejected).length).toBeGreaterThan(20);
      }
      const changed = newest[kind].filter((rejected, index) => rejected !== older[kind][index]);
      expect(changed.length).toBeGreaterThan(5);
    }
  });

  it('notices a disagreement: a CRD that drops one rule admits what the built-in rules refuse', () => {
    const loose = structuredClone(nodeClassCrd);
    schemaOf(loose).properties.ipPrefixCount.minimum = undefined;
    const admission = compile('ec2nodeclasses.karpenter.k8s.aws', loose);
    const object = nodeClass({ ipPrefixCount: -1 });
    expect(
      disagreement({
        builtIn: builtInNodeClass('1.14.1', object),
        engine: enginePaths(admission, object),
      })
    ).toBe('only the built-in rules reject (spec.ipPrefixCount)');
  });
});
