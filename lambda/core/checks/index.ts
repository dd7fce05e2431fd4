import type { Check } from '../check.js';
import { amiAliasResolves } from './ami-alias-resolves.js';
import { amiAllowed } from './ami-allowed.js';
import { amiNewestMatchAvailable } from './ami-newest-match-available.js';
import { amiNotDeprecated } from './ami-not-deprecated.js';
import { amiOwnerExplicit } from './ami-owner-explicit.js';
import { amiSelectorPinned } from './ami-selector-pinned.js';
import { amiSelectorResolves } from './ami-selector-resolves.js';
import { amiSsmParameterResolves } from './ami-ssm-parameter-resolves.js';
import { capacityReservationsResolve } from './capacity-reservations-resolve.js';
import { controllerCanDiscover } from './controller-can-discover.js';
import { controllerCanLaunch } from './controller-can-launch.js';
import { controllerCanManageInstanceProfile } from './controller-can-manage-instance-profile.js';
import { controllerCanPassNodeRole } from './controller-can-pass-node-role.js';
import { controllerRoleFound } from './controller-role-found.js';
import { ebsKmsKeyUsable } from './ebs-kms-key-usable.js';
import { imdsHopLimit } from './imds-hop-limit.js';
import { imdsIpv6Supported } from './imds-ipv6-supported.js';
import { imdsV2Required } from './imds-v2-required.js';
import { instanceProfileExists } from './instance-profile-exists.js';
import { instanceProfileIsName } from './instance-profile-is-name.js';
import { karpenterVersionSupported } from './karpenter-version-supported.js';
import { kubeletConfigValid } from './kubelet-config-valid.js';
import { networkSingleVpc } from './network-single-vpc.js';
import { nodeRoleCanJoin } from './node-role-can-join.js';
import { nodeRolePolicies } from './node-role-policies.js';
import { nodeRoleValid } from './node-role-valid.js';
import { nodeClassReady } from './nodeclass-ready.js';
import { nodeClassSchemaValid } from './nodeclass-schema-valid.js';
import { nodePoolArchHasImage } from './nodepool-arch-has-image.js';
import { nodePoolCapacityTypeOffered } from './nodepool-capacity-type-offered.js';
import { nodePoolInstanceTypesOffered } from './nodepool-instance-types-offered.js';
import { nodePoolMaxPodsWithinEniLimit } from './nodepool-max-pods-within-eni-limit.js';
import { nodePoolNodeClassExists } from './nodepool-nodeclass-exists.js';
import { nodePoolSchemaValid } from './nodepool-schema-valid.js';
import { nodePoolSpotServiceLinkedRole } from './nodepool-spot-service-linked-role.js';
import { nodePoolZonesHaveSubnets } from './nodepool-zones-have-subnets.js';
import { roleIsName } from './role-is-name.js';
import { rootVolumeEncrypted } from './root-volume-encrypted.js';
import { rootVolumeFitsAmi } from './root-volume-fits-ami.js';
import { scannerCanReadCluster } from './scanner-can-read-cluster.js';
import { securityGroupNameUnique } from './security-group-name-unique.js';
import { securityGroupsResolve } from './security-groups-resolve.js';
import { statusAgreesWithScan } from './status-agrees-with-scan.js';
import { subnetsHaveFreeIps } from './subnets-have-free-ips.js';
import { subnetsResolve } from './subnets-resolve.js';
import { tagsNotRestricted } from './tags-not-restricted.js';
import { userDataFitsLimit } from './user-data-fits-limit.js';
import { userDataValid } from './user-data-valid.js';

/** The check catalog, in report order. IDs are stable: never rename one. */
export const CHECKS: readonly Check[] = [
  // A. Spec checks.
  nodeClassSchemaValid,
  nodePoolSchemaValid,
  kubeletConfigValid,
  instanceProfileIsName,
  roleIsName,
  tagsNotRestricted,
  imdsIpv6Supported,
  imdsV2Required,
  imdsHopLimit,
  amiSelectorPinned,
  amiOwnerExplicit,
  rootVolumeEncrypted,
  nodePoolNodeClassExists,
  userDataValid,
  userDataFitsLimit,
  // B. AWS-backed checks.
  amiSelectorResolves,
  amiNewestMatchAvailable,
  amiNotDeprecated,
  amiAllowed,
  amiAliasResolves,
  amiSsmParameterResolves,
  rootVolumeFitsAmi,
  subnetsResolve,
  subnetsHaveFreeIps,
  networkSingleVpc,
  securityGroupsResolve,
  securityGroupNameUnique,
  capacityReservationsResolve,
  instanceProfileExists,
  nodeRoleValid,
  nodeRolePolicies,
  nodeRoleCanJoin,
  // B. Controller permission checks (last of the AWS-backed group).
  controllerRoleFound,
  controllerCanLaunch,
  controllerCanPassNodeRole,
  controllerCanManageInstanceProfile,
  controllerCanDiscover,
  ebsKmsKeyUsable,
  // NodePool ⇄ EC2NodeClass compatibility.
  nodePoolArchHasImage,
  nodePoolZonesHaveSubnets,
  nodePoolCapacityTypeOffered,
  nodePoolSpotServiceLinkedRole,
  nodePoolInstanceTypesOffered,
  nodePoolMaxPodsWithinEniLimit,
  // C. Cluster-state checks.
  nodeClassReady,
  statusAgreesWithScan,
  karpenterVersionSupported,
  scannerCanReadCluster,
];

export function findCheck(id: string): Check | undefined {
  return CHECKS.find((check) => check.id === id);
}
