// Synthetic GitOps manifests for the CRD-admission benchmark: EC2NodeClasses and NodePools in the
// shapes real repositories hold (alias, tag and id AMI terms, block devices, kubelet, metadata
// options, requirements, budgets, limits, taints), one NodePool per NodeClass, with about one
// object in twenty carrying a mistake the API server refuses, so both admission paths also build
// findings. Deterministic: every run scans the same files.
import { stringify } from 'yaml';
import { mulberry32 } from './prng.js';

type Json = Record<string, unknown>;

const ALIASES = ['al2023@latest', 'al2023@v20251016', 'bottlerocket@latest', 'al2@v20250715'];
const CATEGORIES = ['c', 'm', 'r', 't', 'g'];

function nodeClass(index: number, random: () => number): Json {
  const cluster = `cluster-${index % 40}`;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const amiTerm = random() < 0.6 ? 'alias' : random() < 0.5 ? 'tags' : 'id';
  const spec: Json = {
    role: `KarpenterNodeRole-${cluster}`,
    amiSelectorTerms:
      amiTerm === 'alias'
        ? [{ alias: pick(ALIASES) }]
        : amiTerm === 'tags'
          ? [{ tags: { 'image-type': 'eks-node', team: `team-${index % 9}` }, owner: 'self' }]
          : [{ id: `ami-${(index * 7919).toString(16).padStart(17, '0')}` }],
    subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': cluster } }],
    securityGroupSelectorTerms:
      random() < 0.5
        ? [{ tags: { 'karpenter.sh/discovery': cluster } }]
        : [{ id: `sg-${(index * 104_729).toString(16).padStart(17, '0')}` }],
    tags: { team: `team-${index % 9}`, 'cost-center': String(1000 + (index % 50)) },
    metadataOptions: {
      httpEndpoint: 'enabled',
      httpProtocolIPv6: 'disabled',
      httpPutResponseHopLimit: 1 + (index % 2),
      httpTokens: 'required',
    },
    blockDeviceMappings: [
      {
        deviceName: '/dev/xvda',
        rootVolume: true,
        ebs: { volumeSize: `${20 + (index % 200)}Gi`, volumeType: 'gp3', encrypted: true },
      },
    ],
  };
  if (amiTerm !== 'alias') spec.amiFamily = 'AL2023';
  if (random() < 0.4) {
    spec.kubelet = {
      maxPods: 110,
      systemReserved: { cpu: '100m', memory: '200Mi' },
      evictionHard: { 'memory.available': '5%', 'nodefs.available': '10%' },
      imageGCHighThresholdPercent: 85,
      imageGCLowThresholdPercent: 80,
    };
  }
  const broken = random();
  if (broken < 0.02) spec.tags = { 'kubernetes.io/cluster/demo': 'owned' };
  else if (broken < 0.035) spec.amiSelectorTerms = [{ alias: 'al2023@latest' }, { id: 'ami-1' }];
  else if (broken < 0.05) delete spec.subnetSelectorTerms;
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: `nodeclass-${index}`, labels: { cluster } },
    spec,
  };
}

function nodePool(index: number, random: () => number): Json {
  const requirements: Json[] = [
    { key: 'kubernetes.io/arch', operator: 'In', values: random() < 0.5 ? ['amd64'] : ['arm64'] },
    { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand', 'spot'] },
    {
      key: 'karpenter.k8s.aws/instance-category',
      operator: 'In',
      values: CATEGORIES.slice(0, 1 + (index % CATEGORIES.length)),
    },
    { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['5'] },
  ];
  const spec: Json = {
    template: {
      metadata: { labels: { team: `team-${index % 9}` } },
      spec: {
        nodeClassRef: {
          group: 'karpenter.k8s.aws',
          kind: 'EC2NodeClass',
          name: `nodeclass-${index}`,
        },
        requirements,
        expireAfter: `${720 + (index % 48)}h`,
        ...(random() < 0.3
          ? { taints: [{ key: 'dedicated', value: `team-${index % 9}`, effect: 'NoSchedule' }] }
          : {}),
      },
    },
    disruption: {
      consolidationPolicy: 'WhenEmptyOrUnderutilized',
      consolidateAfter: '1m',
      budgets: [{ nodes: '10%' }, { nodes: '0', schedule: '0 9 * * mon-fri', duration: '8h' }],
    },
    limits: { cpu: 1000 + (index % 100), memory: `${4000 + index}Gi` },
    weight: 1 + (index % 100),
  };
  const broken = random();
  if (broken < 0.02)
    requirements.push({ key: 'kubernetes.io/hostname', operator: 'In', values: ['a'] });
  else if (broken < 0.035) (spec.template as { spec: Json }).spec.expireAfter = '30d';
  else if (broken < 0.05) (spec.disruption as Json).budgets = [{ nodes: '1', schedule: '@daily' }];
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: `nodepool-${index}` },
    spec,
  };
}

/**
 * `manifests` objects (half EC2NodeClasses, half NodePools) as YAML files of `perFile`
 * documents each: file name → text.
 */
export function buildManifestFleet(manifests: number, perFile: number): Map<string, string> {
  const random = mulberry32(26);
  const objects: Json[] = [];
  for (let index = 0; index < manifests / 2; index++) {
    objects.push(nodeClass(index, random), nodePool(index, random));
  }
  const files = new Map<string, string>();
  for (let start = 0; start < objects.length; start += perFile) {
    const name = `manifests-${String(start / perFile).padStart(4, '0')}.yaml`;
    const documents = objects.slice(start, start + perFile).map((object) => stringify(object));
    files.set(name, documents.join('---\n'));
  }
  return files;
}
