import type { EC2NodeClassSpec } from './schema.js';

/** `spec.amiFamily` values (Windows2025 from Karpenter v1.9.0). */
export const AMI_FAMILIES = [
  'AL2',
  'AL2023',
  'Bottlerocket',
  'Custom',
  'Windows2019',
  'Windows2022',
  'Windows2025',
] as const;
export type AmiFamily = (typeof AMI_FAMILIES)[number];

/** Alias families (the part before `@`), in lower case exactly as Karpenter compares them. */
export const ALIAS_FAMILIES = [
  'al2',
  'al2023',
  'bottlerocket',
  'windows2019',
  'windows2022',
  'windows2025',
] as const;
export type AliasFamily = (typeof ALIAS_FAMILIES)[number];

/** Alias family → the AMI family it implies. */
export const ALIAS_AMI_FAMILY: Readonly<Record<AliasFamily, Exclude<AmiFamily, 'Custom'>>> = {
  al2: 'AL2',
  al2023: 'AL2023',
  bottlerocket: 'Bottlerocket',
  windows2019: 'Windows2019',
  windows2022: 'Windows2022',
  windows2025: 'Windows2025',
};

function isAmiFamily(value: string): value is AmiFamily {
  return (AMI_FAMILIES as readonly string[]).includes(value);
}

export function isAliasFamily(value: string): value is AliasFamily {
  return (ALIAS_FAMILIES as readonly string[]).includes(value);
}

/** Splits `family@version` as the CRD's CEL does (`self.split('@')`); version is undefined without `@`. */
export function splitAlias(alias: string): { family: string; version?: string } {
  const [family = '', version] = alias.split('@');
  return version === undefined ? { family } : { family, version };
}

/** The AMI family an alias implies, or undefined for an unsupported alias family. */
export function aliasAmiFamily(alias: string): AmiFamily | undefined {
  const { family } = splitAlias(alias);
  return isAliasFamily(family) ? ALIAS_AMI_FAMILY[family] : undefined;
}

/** The family Karpenter uses: `spec.amiFamily` when set, otherwise the alias' family. */
export function effectiveAmiFamily(spec: EC2NodeClassSpec): AmiFamily | undefined {
  if (spec.amiFamily !== undefined) {
    return isAmiFamily(spec.amiFamily) ? spec.amiFamily : undefined;
  }
  const alias = spec.amiSelectorTerms.find((term) => term.alias !== undefined)?.alias;
  return alias === undefined ? undefined : aliasAmiFamily(alias);
}

/** One of Karpenter's default block device mappings (`DefaultEBS`: gp3, encrypted). */
export interface DefaultBlockDevice {
  readonly deviceName: string;
  /** A Kubernetes quantity, as Karpenter writes it. */
  readonly volumeSize: string;
}

/**
 * Karpenter's `DefaultBlockDeviceMappings` of the family, used when spec.blockDeviceMappings is
 * empty. Custom has none: EC2 then uses the AMI's own mappings. Bottlerocket has an OS volume
 * (`/dev/xvda`) and a data volume (`/dev/xvdb`) holding the kubelet root; both carry node data.
 */
export function defaultBlockDeviceMappings(
  family: AmiFamily | undefined
): readonly DefaultBlockDevice[] {
  switch (family) {
    case 'AL2':
    case 'AL2023':
      return [{ deviceName: '/dev/xvda', volumeSize: '20Gi' }];
    case 'Bottlerocket':
      return [
        { deviceName: '/dev/xvda', volumeSize: '4Gi' },
        { deviceName: '/dev/xvdb', volumeSize: '20Gi' },
      ];
    case 'Windows2019':
    case 'Windows2022':
    case 'Windows2025':
      return [{ deviceName: '/dev/sda1', volumeSize: '50Gi' }];
    default:
      return [];
  }
}

/** Device names of the family's default volumes (see `defaultBlockDeviceMappings`). */
export function defaultRootDevices(family: AmiFamily | undefined): readonly string[] {
  return defaultBlockDeviceMappings(family).map((mapping) => mapping.deviceName);
}
