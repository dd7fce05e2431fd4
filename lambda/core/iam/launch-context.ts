// Whether a condition key the simulation lacked is set when Karpenter really makes the call. A key
// that neither Karpenter's request carries nor AWS adds is absent at launch too, so the simulated
// answer is the launch answer; a key AWS fills from the principal or from existing resources may
// change it. docs/permission-semantics.md explains each rule with its sources.
import type { SimulationRequest } from '../facts/permissions.js';

export type LaunchSupply = 'absent' | 'set-by-aws';

/**
 * Keys only a request itself carries: its tags, and the keys IAM and EC2 set for one operation
 * (`iam:PassedToService` on PassRole, `ec2:CreateAction` on tagging at creation). The scanner
 * supplies each wherever Karpenter's request has it, so a missing one is absent at launch.
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html#condition-keys-requesttag
 * https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/supported-iam-actions-tagging.html
 */
const REQUEST_ONLY_KEYS = new Set(['aws:tagkeys', 'ec2:createaction', 'iam:passedtoservice']);

/** `aws:ResourceTag/k`, `ec2:ResourceTag/k`, `iam:ResourceTag/k`…: tags of the resource acted on. */
const RESOURCE_TAG_KEY = /^[a-z0-9-]+:resourcetag\//;

export function launchSupplyOf(
  key: string,
  request: Pick<SimulationRequest, 'resourceTagsKnown'>,
  resource: string
): LaunchSupply {
  const lower = key.toLowerCase();
  if (lower.startsWith('aws:requesttag/') || REQUEST_ONLY_KEYS.has(lower)) return 'absent';
  if (RESOURCE_TAG_KEY.test(lower)) {
    // `*` names no resource; a resource being created has no tags yet; and where the request lists
    // every tag the resource has (Karpenter's own launch templates and instance profiles, existing
    // resources whose tags the scanner read), a tag it lacks is one the resource lacks.
    return resource === '*' || request.resourceTagsKnown === true ? 'absent' : 'set-by-aws';
  }
  // A resource key its resource type does not have is absent for that resource.
  const owners = RESOURCE_TYPES_WITH_KEY[lower];
  const type = ec2ResourceType(resource);
  if (owners !== undefined && type !== undefined && !owners.has(type)) return 'absent';
  // Everything else (principal tags, source IP or VPC endpoint, time, instance type, zone, VPC…)
  // is filled by AWS from the caller or the launch, and may decide.
  return 'set-by-aws';
}

/**
 * The EC2 resource types that carry `ec2:Vpc` and `ec2:AvailabilityZone`
 * (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonec2.html#amazonec2-resources-for-iam-policies).
 */
const RESOURCE_TYPES_WITH_KEY: Readonly<Record<string, ReadonlySet<string>>> = {
  'ec2:vpc': new Set(['subnet', 'security-group', 'network-interface', 'instance']),
  'ec2:availabilityzone': new Set([
    'subnet',
    'capacity-reservation',
    'network-interface',
    'instance',
    'volume',
  ]),
};

/** `arn:aws:ec2:r:a:subnet/subnet-1` → `subnet`; undefined for other services and `*`. */
function ec2ResourceType(resource: string): string | undefined {
  const parts = resource.split(':');
  if (parts[2] !== 'ec2') return undefined;
  return parts.slice(5).join(':').split('/')[0];
}
