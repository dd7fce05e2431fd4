// Which KMS keys a NodeClass's EBS volumes are encrypted with at launch. EC2 encrypts a volume
// with its `KmsKeyId`; an encrypted volume without one, and with encryption by default any volume,
// uses the account's default EBS key of the region
// (https://docs.aws.amazon.com/ebs/latest/userguide/ebs-encryption.html,
// https://docs.aws.amazon.com/ebs/latest/userguide/encryption-by-default.html). Karpenter's
// default volumes are encrypted without a key
// (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/amifamily/resolver.go).
import { defaultBlockDeviceMappings, effectiveAmiFamily } from '../ami-family.js';
import type { EC2NodeClassSpec } from '../schema.js';

/** One volume's claim on a key: where it is written and the device it encrypts. */
export interface EbsVolumeRef {
  /** JSON path of the mapping (`spec.blockDeviceMappings[0]`), or `spec` for Karpenter's defaults. */
  readonly path: string;
  readonly deviceName?: string;
}

export interface EbsKeyUses {
  /** Keys named by `kmsKeyID`, as written, with the volumes naming each. */
  readonly explicit: ReadonlyMap<string, readonly EbsVolumeRef[]>;
  /** Volumes encrypted without a key: the account's default EBS key, whatever encryption by default says. */
  readonly defaultKey: readonly EbsVolumeRef[];
  /** Volumes not marked encrypted: the default key only when the account encrypts by default. */
  readonly defaultKeyIfEncryptedByDefault: readonly EbsVolumeRef[];
}

/** The KMS keys the NodeClass's volumes use, as written (nothing is resolved here). */
export function ebsKeyUsesOf(spec: EC2NodeClassSpec): EbsKeyUses {
  const explicit = new Map<string, EbsVolumeRef[]>();
  const defaultKey: EbsVolumeRef[] = [];
  const ifByDefault: EbsVolumeRef[] = [];
  const mappings = spec.blockDeviceMappings ?? [];
  if (mappings.length === 0) {
    const defaults = defaultBlockDeviceMappings(effectiveAmiFamily(spec));
    // Custom (or an unknown family): the AMI's own mappings, encrypted only by default encryption.
    if (defaults.length === 0) ifByDefault.push({ path: 'spec' });
    for (const mapping of defaults)
      defaultKey.push({ path: 'spec', deviceName: mapping.deviceName });
  }
  mappings.forEach((mapping, index) => {
    const ebs = mapping.ebs;
    if (ebs === undefined) return;
    const ref: EbsVolumeRef = {
      path: `spec.blockDeviceMappings[${index}]`,
      ...(mapping.deviceName === undefined ? {} : { deviceName: mapping.deviceName }),
    };
    const key = ebs.kmsKeyID?.trim();
    if (key !== undefined && key !== '') {
      explicit.set(key, [...(explicit.get(key) ?? []), ref]);
    } else if (ebs.encrypted === true) {
      defaultKey.push(ref);
    } else {
      ifByDefault.push(ref);
    }
  });
  return { explicit, defaultKey, defaultKeyIfEncryptedByDefault: ifByDefault };
}

/** Whether any volume may be encrypted with the account's default key. */
export function mayUseDefaultKey(uses: EbsKeyUses): boolean {
  return uses.defaultKey.length > 0 || uses.defaultKeyIfEncryptedByDefault.length > 0;
}
