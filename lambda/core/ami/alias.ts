// AMI aliases → the SSM parameters Karpenter reads for them (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/amifamily/,
// `pkg/providers/amifamily/{al2023,al2,bottlerocket,windows}.go`).
import { type AliasFamily, isAliasFamily, splitAlias } from '../ami-family.js';
import type { AmiVariant, ImageArchitecture } from '../facts/aws.js';

export type { AliasFamily } from '../ami-family.js';

export interface ParsedAlias {
  readonly family: AliasFamily;
  readonly version: string;
}

/**
 * `family@version` as Karpenter parses it (exactly one `@`, a supported lower-case family, a
 * version); undefined otherwise.
 */
export function parseAlias(alias: string): ParsedAlias | undefined {
  if (alias.split('@').length !== 2) return undefined;
  const { family, version } = splitAlias(alias);
  if (!isAliasFamily(family) || !version) return undefined;
  return { family, version };
}

export interface AliasParameter {
  readonly name: string;
  readonly architecture: ImageArchitecture;
  /** Empty for Windows (its images carry OS/build requirements, not a variant). */
  readonly variants: readonly AmiVariant[];
}

function kubernetesMinor(kubernetesVersion: string): number | undefined {
  const minor = kubernetesVersion.split('.')[1];
  return minor !== undefined && /^\d+$/.test(minor) ? Number(minor) : undefined;
}

/**
 * Karpenter's `UnsupportedAlias` refusal for this Kubernetes version, or undefined. Messages are
 * Karpenter's own.
 */
export function unsupportedAliasMessage(
  alias: ParsedAlias,
  kubernetesVersion: string
): string | undefined {
  const minor = kubernetesMinor(kubernetesVersion);
  if (minor === undefined) return undefined;
  if (alias.family === 'al2' && minor >= 33) {
    return 'AL2 aliases are no longer supported on EKS 1.33+ (see https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions-standard.html#kubernetes-1-33)';
  }
  if (alias.family === 'windows2025' && minor < 35) {
    return `Windows Server 2025 requires EKS version 1.35 or higher, current version: ${kubernetesVersion}`;
  }
  return undefined;
}

function al2023Parameters(k8s: string, version: string): AliasParameter[] {
  const combos: readonly [ImageArchitecture, AmiVariant][] = [
    ['x86_64', 'standard'],
    ['x86_64', 'nvidia'],
    ['x86_64', 'neuron'],
    ['arm64', 'standard'],
    ['arm64', 'nvidia'],
  ];
  return combos.map(([architecture, variant]) => {
    const leaf =
      version === 'latest'
        ? 'recommended'
        : `amazon-eks-node-al2023-${architecture}-${variant}-${k8s}-${version}`;
    return {
      name: `/aws/service/eks/optimized-ami/${k8s}/amazon-linux-2023/${architecture}/${variant}/${leaf}/image_id`,
      architecture,
      variants: [variant],
    };
  });
}

function al2Parameters(k8s: string, version: string): AliasParameter[] {
  const flavours: readonly [string, string, ImageArchitecture, readonly AmiVariant[]][] = [
    ['amazon-linux-2', 'amazon-eks-node', 'x86_64', ['standard']],
    ['amazon-linux-2-arm64', 'amazon-eks-arm64-node', 'arm64', ['standard']],
    ['amazon-linux-2-gpu', 'amazon-eks-gpu-node', 'x86_64', ['neuron', 'nvidia']],
  ];
  return flavours.map(([path, prefix, architecture, variants]) => ({
    name: `/aws/service/eks/optimized-ami/${k8s}/${path}/${version === 'latest' ? 'recommended' : `${prefix}-${k8s}-${version}`}/image_id`,
    architecture,
    variants,
  }));
}

function bottlerocketParameters(k8s: string, version: string): AliasParameter[] {
  // Bottlerocket versions are written with a leading `v` on GitHub but not in SSM; both are accepted.
  const trimmed = version.replace(/^v+/, '');
  const flavours: readonly [string, ImageArchitecture, readonly AmiVariant[]][] = [
    [`aws-k8s-${k8s}`, 'x86_64', ['standard', 'neuron']],
    [`aws-k8s-${k8s}`, 'arm64', ['standard']],
    [`aws-k8s-${k8s}-nvidia`, 'x86_64', ['nvidia']],
    [`aws-k8s-${k8s}-nvidia`, 'arm64', ['nvidia']],
  ];
  return flavours.map(([path, architecture, variants]) => ({
    name: `/aws/service/bottlerocket/${path}/${architecture}/${trimmed}/image_id`,
    architecture,
    variants,
  }));
}

function windowsParameters(family: AliasFamily, k8s: string): AliasParameter[] {
  const release = family.slice('windows'.length);
  return [
    {
      name: `/aws/service/ami-windows-latest/Windows_Server-${release}-English-Core-EKS_Optimized-${k8s}/image_id`,
      architecture: 'x86_64',
      variants: [],
    },
  ];
}

/** The SSM parameters Karpenter reads for an alias, in its order. */
export function aliasParameters(alias: ParsedAlias, kubernetesVersion: string): AliasParameter[] {
  switch (alias.family) {
    case 'al2023':
      return al2023Parameters(kubernetesVersion, alias.version);
    case 'al2':
      return al2Parameters(kubernetesVersion, alias.version);
    case 'bottlerocket':
      return bottlerocketParameters(kubernetesVersion, alias.version);
    default:
      return windowsParameters(alias.family, kubernetesVersion);
  }
}
