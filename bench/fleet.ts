// Synthetic fleets for benchmarks: a world-state file (WorldSchema shape) with C clusters × N
// NodeClasses and realistic selector sharing — most classes reuse their cluster's discovery tags
// and a few account-wide AMI aliases; about one in ten has a unique AMI name selector. The region
// has a synthetic instance-type catalog of Karpenter's size with its zone offerings.
import { mulberry32 } from './prng.js';

const ACCOUNT = '111122223333';
const REGION = 'us-east-1';
const K8S_VERSION = '1.33';
const ALIASES = ['al2023@v20251001', 'al2023@v20251015', 'bottlerocket@1.50.0'] as const;
const ARCHES = ['x86_64', 'arm64'] as const;
const ZONES = ['a', 'b', 'c', 'd', 'e', 'f'].map((letter) => `us-east-1${letter}`);

/** Families of the synthetic catalog: name, architecture, GiB per vCPU, sizes, and extras. */
interface Family {
  readonly name: string;
  readonly arch: 'x86_64' | 'arm64';
  readonly memoryPerVcpu: number;
  readonly sizes: readonly string[];
  readonly gpu?: { readonly name: string; readonly memoryMiB: number };
  readonly nvmeGbPerVcpu?: number;
}

const SIZES = [
  'large',
  'xlarge',
  '2xlarge',
  '4xlarge',
  '8xlarge',
  '12xlarge',
  '16xlarge',
  '24xlarge',
];
const WIDE = [...SIZES, '32xlarge', '48xlarge', 'metal'];
const VCPUS: Readonly<Record<string, number>> = {
  nano: 2,
  micro: 2,
  small: 2,
  medium: 2,
  large: 2,
  xlarge: 4,
  '2xlarge': 8,
  '4xlarge': 16,
  '8xlarge': 32,
  '12xlarge': 48,
  '16xlarge': 64,
  '24xlarge': 96,
  '32xlarge': 128,
  '48xlarge': 192,
  metal: 192,
};

function families(): Family[] {
  const out: Family[] = [];
  const add = (
    names: string,
    arch: Family['arch'],
    memoryPerVcpu: number,
    sizes = SIZES,
    more = {}
  ) => {
    for (const name of names.split(' ')) out.push({ name, arch, memoryPerVcpu, sizes, ...more });
  };
  add('m5 m5a m5n m5zn m6i m6a m6in m7i m7a m7i-flex m8i', 'x86_64', 4, WIDE);
  add('m5d m5ad m5dn m6id m6idn m7id', 'x86_64', 4, WIDE, { nvmeGbPerVcpu: 37.5 });
  add('m6g m7g m8g', 'arm64', 4);
  add('m6gd m7gd m8gd', 'arm64', 4, SIZES, { nvmeGbPerVcpu: 59 });
  add('c5 c5a c5n c6i c6a c6in c7i c7a c7i-flex c8i', 'x86_64', 2, WIDE);
  add('c5d c5ad c6id c7id', 'x86_64', 2, WIDE, { nvmeGbPerVcpu: 25 });
  add('c6g c6gn c7g c7gn c8g', 'arm64', 2);
  add('c6gd c7gd', 'arm64', 2, SIZES, { nvmeGbPerVcpu: 59 });
  add('r5 r5a r5b r5n r6i r6a r6in r7i r7a r7iz r8i', 'x86_64', 8, WIDE);
  add('r5d r5ad r5dn r6id r6idn r7id', 'x86_64', 8, WIDE, { nvmeGbPerVcpu: 37.5 });
  add('r6g r7g r8g', 'arm64', 8);
  add('r6gd r7gd', 'arm64', 8, SIZES, { nvmeGbPerVcpu: 59 });
  add(
    'x2idn x2iedn x2iezn',
    'x86_64',
    32,
    ['xlarge', '2xlarge', '4xlarge', '8xlarge', '16xlarge', '24xlarge', '32xlarge', 'metal'],
    { nvmeGbPerVcpu: 30 }
  );
  add('x2gd x8g', 'arm64', 16, SIZES, { nvmeGbPerVcpu: 59 });
  add('i3 i3en i4i i7ie', 'x86_64', 8, SIZES, { nvmeGbPerVcpu: 468 });
  add('i4g im4gn is4gen', 'arm64', 8, SIZES, { nvmeGbPerVcpu: 468 });
  add('t3 t3a', 'x86_64', 2, ['nano', 'micro', 'small', 'medium', 'large', 'xlarge', '2xlarge']);
  add('t4g', 'arm64', 2, ['nano', 'micro', 'small', 'medium', 'large', 'xlarge', '2xlarge']);
  add('z1d', 'x86_64', 8, [
    'large',
    'xlarge',
    '2xlarge',
    '3xlarge',
    '6xlarge',
    '12xlarge',
    'metal',
  ]);
  add('g4dn', 'x86_64', 4, SIZES, { gpu: { name: 'T4', memoryMiB: 16384 }, nvmeGbPerVcpu: 28 });
  add('g5 g6 g6e', 'x86_64', 4, SIZES, {
    gpu: { name: 'A10G', memoryMiB: 24576 },
    nvmeGbPerVcpu: 60,
  });
  add('g5g', 'arm64', 2, ['xlarge', '2xlarge', '4xlarge', '8xlarge', '16xlarge'], {
    gpu: { name: 'T4g', memoryMiB: 16384 },
  });
  add('p3 p4d p5', 'x86_64', 8, ['2xlarge', '8xlarge', '16xlarge', '24xlarge', '48xlarge'], {
    gpu: { name: 'A100', memoryMiB: 40960 },
  });
  return out;
}

/**
 * A synthetic us-east-1 catalog of Karpenter's size (about 800 types, as DescribeInstanceTypes
 * returns them) and its zone offerings: each type in four to six of the region's six zones.
 */
function instanceTypeCatalog(rand: () => number): {
  readonly types: Record<string, unknown>[];
  readonly offerings: { instanceType: string; zone: string }[];
} {
  const types: Record<string, unknown>[] = [];
  const offerings: { instanceType: string; zone: string }[] = [];
  for (const family of families()) {
    for (const size of family.sizes) {
      const vcpus = VCPUS[size] ?? (Number.parseInt(size, 10) * 4 || 2);
      const small = vcpus <= 2;
      const enis = vcpus <= 2 ? 3 : vcpus <= 8 ? 4 : vcpus <= 48 ? 8 : 15;
      const ipv4 =
        vcpus <= 2
          ? size === 'nano' || size === 'micro'
            ? 2
            : 10
          : vcpus <= 8
            ? 15
            : vcpus <= 48
              ? 30
              : 50;
      const name = `${family.name}.${size}`;
      const gpus = family.gpu ? Math.max(1, Math.floor(vcpus / 8)) : 0;
      types.push({
        InstanceType: name,
        CurrentGeneration: true,
        SupportedUsageClasses: ['on-demand', 'spot'],
        SupportedVirtualizationTypes: ['hvm'],
        BareMetal: size === 'metal',
        Hypervisor: size === 'metal' ? undefined : 'nitro',
        ProcessorInfo: {
          SupportedArchitectures: [family.arch],
          Manufacturer:
            family.arch === 'arm64' ? 'AWS' : family.name.includes('a') ? 'AMD' : 'Intel',
          SustainedClockSpeedInGhz: family.arch === 'arm64' ? 2.6 : 3.2,
        },
        VCpuInfo: { DefaultVCpus: vcpus },
        MemoryInfo: {
          SizeInMiB:
            small && family.name.startsWith('t')
              ? 512 * vcpus
              : vcpus * family.memoryPerVcpu * 1024,
        },
        ...(family.gpu
          ? {
              GpuInfo: {
                Gpus: [
                  {
                    Name: family.gpu.name,
                    Manufacturer: 'NVIDIA',
                    Count: gpus,
                    MemoryInfo: { SizeInMiB: family.gpu.memoryMiB },
                  },
                ],
              },
            }
          : {}),
        ...(family.nvmeGbPerVcpu
          ? {
              InstanceStorageInfo: {
                TotalSizeInGB: Math.round(vcpus * family.nvmeGbPerVcpu),
                NvmeSupport: 'required',
              },
            }
          : {}),
        EbsInfo: {
          EbsOptimizedSupport: 'default',
          EbsOptimizedInfo: { MaximumBandwidthInMbps: Math.min(40000, 2500 * vcpus) },
        },
        NetworkInfo: {
          MaximumNetworkInterfaces: enis,
          DefaultNetworkCardIndex: 0,
          NetworkCards: [{ NetworkCardIndex: 0, MaximumNetworkInterfaces: enis }],
          Ipv4AddressesPerInterface: ipv4,
          EnaSupport: 'required',
          EncryptionInTransitSupported: true,
        },
      });
      const zones = 4 + Math.floor(rand() * 3);
      for (const zone of ZONES.slice(0, zones)) offerings.push({ instanceType: name, zone });
    }
  }
  return { types, offerings };
}

export interface FleetSize {
  readonly clusters: number;
  readonly nodeClassesPerCluster: number;
}

function hex(n: number, width = 17): string {
  return n.toString(16).padStart(width, '0').slice(-width);
}

/** The SSM parameters the fleet publishes for an alias (its images' ids), by path. */
export function aliasParameters(
  alias: string,
  imageIdFor: (key: string) => string
): Record<string, string> {
  const [family, version] = alias.split('@') as [string, string];
  const parameters: Record<string, string> = {};
  if (family === 'al2023') {
    const variants: Record<string, readonly string[]> = {
      x86_64: ['standard', 'nvidia', 'neuron'],
      arm64: ['standard', 'nvidia'],
    };
    for (const arch of ARCHES) {
      for (const variant of variants[arch] ?? []) {
        const name =
          version === 'latest'
            ? 'recommended'
            : `amazon-eks-node-al2023-${arch}-${variant}-${K8S_VERSION}-${version}`;
        const path = `/aws/service/eks/optimized-ami/${K8S_VERSION}/amazon-linux-2023/${arch}/${variant}/${name}/image_id`;
        parameters[path] = imageIdFor(path);
      }
    }
  } else if (family === 'bottlerocket') {
    for (const arch of ARCHES) {
      for (const flavour of ['', '-nvidia']) {
        const path = `/aws/service/bottlerocket/aws-k8s-${K8S_VERSION}${flavour}/${arch}/${version.replace(/^v/, '')}/image_id`;
        parameters[path] = imageIdFor(path);
      }
    }
  }
  return parameters;
}

export function buildFleetWorld(size: FleetSize, seed = 42): Record<string, unknown> {
  const rand = mulberry32(seed);
  let counter = 1;
  const nextId = (prefix: string) => `${prefix}-${hex(counter++)}`;
  const images: Record<string, unknown>[] = [];
  // EKS-optimized images are Amazon's; a team's own (unique) images are owned by the account.
  const imageFor = (name: string, arch: string, owner: 'amazon' | 'self' = 'amazon') => {
    const id = nextId('ami');
    images.push({
      ImageId: id,
      Name: name,
      OwnerId: owner === 'self' ? ACCOUNT : '602401143452',
      ...(owner === 'self' ? {} : { ImageOwnerAlias: 'amazon' }),
      State: 'available',
      Architecture: arch,
      CreationDate: '2025-10-01T00:00:00.000Z',
      RootDeviceName: '/dev/xvda',
      BlockDeviceMappings: [
        { DeviceName: '/dev/xvda', Ebs: { VolumeSize: 20, SnapshotId: nextId('snap') } },
      ],
      Tags: [],
    });
    return id;
  };
  const parameters: Record<string, string> = {};
  for (const alias of ALIASES) {
    Object.assign(
      parameters,
      aliasParameters(alias, (path) =>
        imageFor(
          path.split('/').slice(-2, -1)[0] ?? alias,
          path.includes('arm64') ? 'arm64' : 'x86_64'
        )
      )
    );
  }

  const subnets: Record<string, unknown>[] = [];
  const securityGroups: Record<string, unknown>[] = [];
  const roles: Record<string, unknown>[] = [];
  const instanceProfiles: Record<string, unknown>[] = [];
  const clusters: Record<string, unknown>[] = [];
  const trust = JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' },
    ],
  });
  const nodePolicies = [
    'AmazonEKSWorkerNodePolicy',
    'AmazonEC2ContainerRegistryPullOnly',
    'AmazonEKS_CNI_Policy',
    'AmazonSSMManagedInstanceCore',
  ].map((name) => ({ PolicyName: name, PolicyArn: `arn:aws:iam::aws:policy/${name}` }));

  for (let c = 0; c < size.clusters; c++) {
    const cluster = `bench-${String(c).padStart(3, '0')}`;
    const vpcId = nextId('vpc');
    const discovery = [{ Key: 'karpenter.sh/discovery', Value: cluster }];
    for (let s = 0; s < 3; s++) {
      subnets.push({
        SubnetId: nextId('subnet'),
        VpcId: vpcId,
        AvailabilityZone: `${REGION}${'abc'[s]}`,
        AvailableIpAddressCount: 2000 + Math.floor(rand() * 2000),
        Tags: discovery,
      });
    }
    securityGroups.push({
      GroupId: nextId('sg'),
      GroupName: `${cluster}-node`,
      VpcId: vpcId,
      Tags: discovery,
    });
    const nodeRole = `KarpenterNodeRole-${cluster}`;
    const controllerRole = `KarpenterControllerRole-${cluster}`;
    roles.push(
      {
        RoleName: nodeRole,
        Arn: `arn:aws:iam::${ACCOUNT}:role/${nodeRole}`,
        AssumeRolePolicyDocument: trust,
        AttachedPolicies: nodePolicies,
      },
      {
        RoleName: controllerRole,
        Arn: `arn:aws:iam::${ACCOUNT}:role/${controllerRole}`,
        AttachedPolicies: [],
      }
    );
    instanceProfiles.push({
      InstanceProfileName: `${cluster}-nodes`,
      Arn: `arn:aws:iam::${ACCOUNT}:instance-profile/${cluster}-nodes`,
      Roles: [{ RoleName: nodeRole, Arn: `arn:aws:iam::${ACCOUNT}:role/${nodeRole}` }],
    });

    const nodeClasses: Record<string, unknown>[] = [];
    const nodePools: Record<string, unknown>[] = [];
    for (let n = 0; n < size.nodeClassesPerCluster; n++) {
      const name = `nc-${String(n).padStart(3, '0')}`;
      const unique = rand() < 0.1;
      let amiSelectorTerms: unknown[];
      if (unique) {
        const imageName = `bench-${cluster}-${name}-*`;
        imageFor(imageName.replace('*', '2025'), 'x86_64', 'self');
        amiSelectorTerms = [{ name: imageName, owner: 'self' }];
      } else {
        amiSelectorTerms = [{ alias: ALIASES[Math.floor(rand() * ALIASES.length)] }];
      }
      const useProfile = rand() < 0.2;
      nodeClasses.push({
        apiVersion: 'karpenter.k8s.aws/v1',
        kind: 'EC2NodeClass',
        metadata: { name, generation: 1 },
        spec: {
          ...(unique ? { amiFamily: 'AL2023' } : {}),
          amiSelectorTerms,
          ...(useProfile ? { instanceProfile: `${cluster}-nodes` } : { role: nodeRole }),
          subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': cluster } }],
          securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': cluster } }],
          metadataOptions: {
            httpEndpoint: 'enabled',
            httpProtocolIPv6: 'disabled',
            httpPutResponseHopLimit: 1,
            httpTokens: 'required',
          },
          blockDeviceMappings: [
            {
              deviceName: '/dev/xvda',
              rootVolume: true,
              ebs: { volumeSize: '80Gi', volumeType: 'gp3', encrypted: true },
            },
          ],
        },
        status: {
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              observedGeneration: 1,
              lastTransitionTime: '2025-10-02T00:00:00Z',
            },
          ],
        },
      });
      nodePools.push({
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name },
        spec: {
          template: {
            spec: {
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name },
              // Required by the v1 CRD; the region's instance types and offerings are read once.
              requirements: [
                { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
              ],
            },
          },
        },
      });
    }
    clusters.push({
      name: cluster,
      arn: `arn:aws:eks:${REGION}:${ACCOUNT}:cluster/${cluster}`,
      version: K8S_VERSION,
      endpoint: `https://${hex(c, 32).toUpperCase()}.gr7.${REGION}.eks.amazonaws.com`,
      status: 'ACTIVE',
      resourcesVpcConfig: { vpcId },
      accessConfig: { authenticationMode: 'API' },
      accessEntries: [
        {
          principalArn: `arn:aws:iam::${ACCOUNT}:role/${nodeRole}`,
          type: 'EC2_LINUX',
          kubernetesGroups: [],
        },
      ],
      podIdentityAssociations: [
        {
          namespace: 'kube-system',
          serviceAccount: 'karpenter',
          roleArn: `arn:aws:iam::${ACCOUNT}:role/${controllerRole}`,
        },
      ],
      kubernetes: {
        karpenterVersion: '1.8.0',
        karpenterNamespace: 'kube-system',
        karpenterServiceAccount: 'karpenter',
        serviceAccounts: [{ namespace: 'kube-system', name: 'karpenter', annotations: {} }],
        ec2NodeClasses: nodeClasses,
        nodePools,
      },
    });
  }

  // The region's instance types and zone offerings, read once per scan for every NodePool.
  const catalog = instanceTypeCatalog(mulberry32(seed + 1));
  return {
    version: 1,
    account: ACCOUNT,
    region: REGION,
    partition: 'aws',
    ec2: { images, subnets, securityGroups, capacityReservations: [] },
    instanceTypeOfferings: { [REGION]: catalog.offerings },
    instanceTypes: { [REGION]: catalog.types },
    ssm: { parameters },
    iam: { instanceProfiles, roles, permissions: [], permissionsDefault: 'allowed' },
    eks: { clusters },
  };
}
