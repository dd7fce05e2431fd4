// The region-wide instance-type queries exactly as Karpenter sends them
// (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/instancetype/instancetype.go,
// UpdateInstanceTypes and UpdateInstanceTypeOfferings), and their filter semantics for the offline
// adapter and the benchmark's emulated EC2.
import type { Ec2Filter, InstanceTypeInfo } from '../facts/aws.js';
import type { FilterQuery } from '../facts/queries.js';
import { matchesFilters } from './ec2-filter.js';

/** DescribeInstanceTypes: HVM types of the architectures Karpenter launches. */
export const INSTANCE_TYPES_QUERY: FilterQuery = {
  filters: [
    { name: 'supported-virtualization-type', values: ['hvm'] },
    { name: 'processor-info.supported-architecture', values: ['x86_64', 'arm64'] },
  ],
};

/** DescribeInstanceTypeOfferings: one row per instance type and availability zone. */
export const INSTANCE_TYPE_OFFERINGS_LOCATION = 'availability-zone';

function instanceTypeAttribute(
  info: InstanceTypeInfo,
  name: string
): readonly (string | undefined)[] | undefined {
  switch (name) {
    case 'instance-type':
      return [info.instanceType];
    case 'supported-virtualization-type':
      return info.virtualizationTypes;
    case 'processor-info.supported-architecture':
      return info.architectures;
    case 'hypervisor':
      return [info.hypervisor];
    case 'bare-metal':
      return info.bareMetal === undefined ? [] : [String(info.bareMetal)];
    default:
      return undefined;
  }
}

/** DescribeInstanceTypes filter semantics for one instance type (no tags: types have none). */
export function instanceTypeMatchesQuery(info: InstanceTypeInfo, query: FilterQuery): boolean {
  const filters: readonly Ec2Filter[] = query.filters;
  return (
    (query.ids === undefined || query.ids.includes(info.instanceType)) &&
    matchesFilters('instance types', filters, {}, (name) => instanceTypeAttribute(info, name))
  );
}
