import { defineCheck } from '../check.js';
import { eniLimitedPods, familyTraits } from '../instance-types.js';
import { instanceTypeContext } from '../launchability.js';
import { list } from './support/aws-facts.js';
import { forEachNodePool, withLaunchability } from './support/nodepools.js';

/** The pods kubelet admits on the NodePool's types fit the IPs their ENIs give the VPC CNI. */
export const nodePoolMaxPodsWithinEniLimit = defineCheck({
  id: 'nodepool-max-pods-within-eni-limit',
  title: "kubelet maxPods fits the ENI capacity of the NodePool's instance types",
  group: 'aws',
  severity: 'medium',
  inputs: ['aws'],
  scope: ['NodePool'],
  rationale:
    "With spec.kubelet.maxPods set, Karpenter admits that many pods per node whatever the instance type's ENIs can address. On types whose ENIs give the VPC CNI fewer IPs, the pods beyond that are scheduled but stay ContainerCreating without an IP (unless prefix delegation or another CNI provides more).",
  remediation:
    'Lower spec.kubelet.maxPods to the smallest ENI limit of the types the NodePool allows, exclude the small types from the NodePool, or enable VPC CNI prefix delegation (and keep maxPods within its limit).',
  references: [
    '#7318',
    '#5317',
    'https://karpenter.sh/docs/concepts/nodeclasses/#speckubelet',
    'https://docs.aws.amazon.com/eks/latest/userguide/choosing-instance-type.html#determine-max-pods',
    'https://docs.aws.amazon.com/eks/latest/userguide/cni-increase-ip-addresses.html',
  ],
  material: ['maxPods', 'overcommitted[].instanceType'],
  evaluate: (inventory, { now }) =>
    forEachNodePool(inventory, (nodePool, target) => {
      const { resource } = target;
      return withLaunchability(nodePool, target, now, ({ nodeClass, result }) => {
        const spec = nodeClass.nodeClass.spec;
        const context = instanceTypeContext(spec, target.cluster);
        const maxPods = context.kubelet.maxPods;
        const className = nodeClass.entry.name;
        if (maxPods === undefined) {
          return [
            {
              status: 'not-applicable',
              resource,
              message: `EC2NodeClass "${className}" sets no kubelet maxPods: Karpenter derives max pods from each type's ENIs.`,
            },
          ];
        }
        if (!familyTraits(context.amiFamily).supportsEniLimitedPodDensity) {
          return [
            {
              status: 'not-applicable',
              resource,
              message: `EC2NodeClass "${className}" uses ${familyTraits(context.amiFamily).family}, whose pod density Karpenter does not derive from ENIs.`,
            },
          ];
        }
        if (result.types.size === 0 || result.mode !== 'types') {
          return [
            {
              status: 'not-applicable',
              resource,
              message:
                result.types.size === 0
                  ? 'The NodePool can launch no instance type (see nodepool-instance-types-offered).'
                  : 'The instance types were not read (DescribeInstanceTypes): their ENIs are unknown.',
              ...(result.types.size === 0
                ? { causedBy: { checkId: 'nodepool-instance-types-offered' } }
                : {}),
            },
          ];
        }
        const overcommitted = [...result.types.entries()]
          .flatMap(([instanceType, type]) => {
            if (type === undefined) return [];
            const eni = eniLimitedPods(type.info, context.settings.reservedENIs, context);
            const pods = Number(type.capacity.pods?.numerator ?? 0n);
            return eni !== undefined && pods > eni ? [{ instanceType, pods, eniPods: eni }] : [];
          })
          .sort((a, b) => a.eniPods - b.eniPods || a.instanceType.localeCompare(b.instanceType));
        const evidence = { nodeClass: className, maxPods, overcommitted, types: result.types.size };
        if (overcommitted.length === 0) {
          return [
            {
              status: 'pass',
              resource,
              message: `kubelet maxPods ${maxPods} of EC2NodeClass "${className}" is within the ENI limit of each of the ${result.types.size} type(s) the NodePool can launch.`,
              evidence,
            },
          ];
        }
        const shown = overcommitted.map((item) => `${item.instanceType} (${item.eniPods})`);
        return [
          {
            status: 'fail',
            resource,
            message: `kubelet maxPods ${maxPods} of EC2NodeClass "${className}" exceeds what the ENIs address on ${overcommitted.length} of the ${result.types.size} type(s) the NodePool can launch: ${list(shown)}. Pods beyond that stay ContainerCreating without an IP, unless the VPC CNI uses prefix delegation or another CNI assigns the IPs.`,
            evidence,
          },
        ];
      });
    }),
});
