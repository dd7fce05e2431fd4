// Synthetic fleets for benchmarks: a world-state file (WorldSchema shape) with C clusters × N
// NodeClasses and realistic selector sharing — most classes reuse their cluster's discovery tags
// and a few account-wide AMI aliases; about one in ten has a unique AMI name selector.
import { mulberry32 } from './prng.js';

const ACCOUNT = '111122223333';
const REGION = 'us-east-1';
const K8S_VERSION = '1.33';
const ALIASES = ['al2023@v20251001', 'al2023@v20251015', 'bottlerocket@1.50.0'] as const;
const ARCHES = ['x86_64', 'arm64'] as const;

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
              // Required by the v1 CRD; no instance type restriction (no offerings query needed).
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

  return {
    version: 1,
    account: ACCOUNT,
    region: REGION,
    partition: 'aws',
    ec2: { images, subnets, securityGroups, capacityReservations: [] },
    ssm: { parameters },
    iam: { instanceProfiles, roles, permissions: [], permissionsDefault: 'allowed' },
    eks: { clusters },
  };
}
