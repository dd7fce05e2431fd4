import { describe, expect, it } from 'vitest';
import {
  aliasParameters,
  parseAlias,
  unsupportedAliasMessage,
} from '../../../lambda/core/ami/alias.js';

function names(alias: string, k8s: string): string[] {
  const parsed = parseAlias(alias);
  if (!parsed) throw new Error(`bad alias ${alias}`);
  return aliasParameters(parsed, k8s).map((parameter) => parameter.name);
}

describe('alias SSM parameters', () => {
  it('reads the five AL2023 recommended parameters for latest', () => {
    expect(names('al2023@latest', '1.32')).toEqual([
      '/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/x86_64/standard/recommended/image_id',
      '/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/x86_64/nvidia/recommended/image_id',
      '/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/x86_64/neuron/recommended/image_id',
      '/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/arm64/standard/recommended/image_id',
      '/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/arm64/nvidia/recommended/image_id',
    ]);
  });

  it('names a pinned AL2023 version per arch and variant', () => {
    expect(names('al2023@v20251001', '1.32')[0]).toBe(
      '/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.32-v20251001/image_id'
    );
  });

  it('reads AL2 standard, arm64 and gpu (nvidia + neuron) parameters', () => {
    const parsed = parseAlias('al2@v20240807');
    expect(parsed && aliasParameters(parsed, '1.30')).toEqual([
      {
        name: '/aws/service/eks/optimized-ami/1.30/amazon-linux-2/amazon-eks-node-1.30-v20240807/image_id',
        architecture: 'x86_64',
        variants: ['standard'],
      },
      {
        name: '/aws/service/eks/optimized-ami/1.30/amazon-linux-2-arm64/amazon-eks-arm64-node-1.30-v20240807/image_id',
        architecture: 'arm64',
        variants: ['standard'],
      },
      {
        name: '/aws/service/eks/optimized-ami/1.30/amazon-linux-2-gpu/amazon-eks-gpu-node-1.30-v20240807/image_id',
        architecture: 'x86_64',
        variants: ['neuron', 'nvidia'],
      },
    ]);
  });

  it('drops the leading v of Bottlerocket versions', () => {
    expect(names('bottlerocket@v1.26.0', '1.31')).toEqual([
      '/aws/service/bottlerocket/aws-k8s-1.31/x86_64/1.26.0/image_id',
      '/aws/service/bottlerocket/aws-k8s-1.31/arm64/1.26.0/image_id',
      '/aws/service/bottlerocket/aws-k8s-1.31-nvidia/x86_64/1.26.0/image_id',
      '/aws/service/bottlerocket/aws-k8s-1.31-nvidia/arm64/1.26.0/image_id',
    ]);
    expect(names('bottlerocket@latest', '1.31')[0]).toBe(
      '/aws/service/bottlerocket/aws-k8s-1.31/x86_64/latest/image_id'
    );
  });

  it('reads one Windows Core parameter', () => {
    expect(names('windows2022@latest', '1.31')).toEqual([
      '/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.31/image_id',
    ]);
  });

  it('rejects aliases Karpenter would not parse', () => {
    expect(parseAlias('AL2023@latest')).toBeUndefined();
    expect(parseAlias('al2023')).toBeUndefined();
    expect(parseAlias('ubuntu@latest')).toBeUndefined();
  });

  it('refuses AL2 on 1.33+ and Windows 2025 below 1.35, as Karpenter does', () => {
    expect(unsupportedAliasMessage({ family: 'al2', version: 'latest' }, '1.33')).toContain(
      '1.33+'
    );
    expect(unsupportedAliasMessage({ family: 'al2', version: 'latest' }, '1.32')).toBeUndefined();
    expect(unsupportedAliasMessage({ family: 'windows2025', version: 'latest' }, '1.34')).toContain(
      '1.35'
    );
    expect(
      unsupportedAliasMessage({ family: 'windows2025', version: 'latest' }, '1.35')
    ).toBeUndefined();
  });
});
