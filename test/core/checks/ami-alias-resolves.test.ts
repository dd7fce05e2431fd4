import { describe, expect, it } from 'vitest';
import { amiAliasResolves } from '../../../lambda/core/checks/ami-alias-resolves.js';
import type { AliasParameterLookup, AliasResolution } from '../../../lambda/core/facts/aws.js';
import { ok, unavailable } from '../../../lambda/core/facts/slice.js';
import {
  anAmiFacts,
  anAwsInventory,
  SCAN_TIME,
  someAwsFacts,
  throttled,
} from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';

const now = SCAN_TIME;
const nodeClass = aNodeClassObject({ spec: { amiSelectorTerms: [{ alias: 'al2023@latest' }] } });

function parameter(value: AliasParameterLookup['value']): AliasParameterLookup {
  return {
    name: '/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/x86_64/standard/recommended/image_id',
    architecture: 'x86_64',
    variants: ['standard'],
    value,
  };
}

function evaluateWith(alias: Partial<AliasResolution>) {
  const resolution: AliasResolution = {
    alias: 'al2023@latest',
    family: 'al2023',
    version: 'latest',
    kubernetesVersion: '1.32',
    parameters: [],
    ...alias,
  };
  const facts = someAwsFacts({ amis: ok(anAmiFacts({ alias: resolution })) });
  return amiAliasResolves.evaluate(anAwsInventory([nodeClass], facts), { now });
}

describe('ami-alias-resolves', () => {
  it('passes when a parameter resolves', () => {
    const [finding] = evaluateWith({
      parameters: [parameter(ok('ami-0123')), parameter(ok(undefined))],
    });
    expect(finding?.status).toBe('pass');
    expect(finding?.message).toContain('1 of 2');
  });

  it('fails when no parameter exists for the Kubernetes version', () => {
    const [finding] = evaluateWith({ parameters: [parameter(ok(undefined))] });
    expect(finding?.status).toBe('fail');
    expect(finding?.location).toEqual({ path: 'spec.amiSelectorTerms[0].alias' });
  });

  it('fails when Karpenter refuses the alias for the version', () => {
    const [finding] = evaluateWith({
      unsupported: 'Windows Server 2025 requires EKS version 1.35 or higher',
    });
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('UnsupportedAlias');
  });

  it('gives the remediation of the refusal: a newer cluster for windows2025, not "move off AL2"', () => {
    const raw = aNodeClassObject({
      spec: { amiFamily: undefined, amiSelectorTerms: [{ alias: 'windows2025@latest' }] },
    });
    const resolution: AliasResolution = {
      alias: 'windows2025@latest',
      family: 'windows2025',
      version: 'latest',
      kubernetesVersion: '1.33',
      unsupported: 'Windows Server 2025 requires EKS version 1.35 or higher, current version: 1.33',
      parameters: [],
    };
    const facts = someAwsFacts({ amis: ok(anAmiFacts({ alias: resolution })) });
    const [finding] = amiAliasResolves.evaluate(anAwsInventory([raw], facts), { now });
    expect(finding?.remediation).toContain('1.35');
    expect(finding?.remediation).not.toContain('AL2');
  });

  it('tells AL2 on Kubernetes 1.33+ to move to AL2023 or Bottlerocket', () => {
    const raw = aNodeClassObject({ spec: { amiSelectorTerms: [{ alias: 'al2@latest' }] } });
    const resolution: AliasResolution = {
      alias: 'al2@latest',
      family: 'al2',
      version: 'latest',
      kubernetesVersion: '1.33',
      unsupported: 'AL2 aliases are no longer supported on EKS 1.33+',
      parameters: [],
    };
    const facts = someAwsFacts({ amis: ok(anAmiFacts({ alias: resolution })) });
    const [finding] = amiAliasResolves.evaluate(anAwsInventory([raw], facts), { now });
    expect(finding?.remediation).toMatch(/al2023/);
  });

  it('does not tell a Bottlerocket alias that resolves to nothing to move off AL2', () => {
    const raw = aNodeClassObject({
      spec: { amiSelectorTerms: [{ alias: 'bottlerocket@1.49.0' }] },
    });
    const [finding] = amiAliasResolves.evaluate(
      anAwsInventory(
        [raw],
        someAwsFacts({
          amis: ok(
            anAmiFacts({
              alias: {
                alias: 'bottlerocket@1.49.0',
                family: 'bottlerocket',
                version: '1.49.0',
                kubernetesVersion: '1.32',
                parameters: [parameter(ok(undefined))],
              },
            })
          ),
        })
      ),
      { now }
    );
    expect(finding?.status).toBe('fail');
    expect(finding?.remediation).not.toContain('AL2');
    expect(finding?.remediation).toContain('1.32');
  });

  it('does not call a malformed alias UnsupportedAlias (the CRD rejects it)', () => {
    const raw = aNodeClassObject({ spec: { amiSelectorTerms: [{ alias: 'ubuntu@latest' }] } });
    const resolution: AliasResolution = {
      alias: 'ubuntu@latest',
      family: 'ubuntu',
      version: 'latest',
      kubernetesVersion: '1.32',
      unsupported: '"ubuntu@latest" is not family@version with a supported family',
      parameters: [],
    };
    const facts = someAwsFacts({ amis: ok(anAmiFacts({ alias: resolution })) });
    const [finding] = amiAliasResolves.evaluate(anAwsInventory([raw], facts), { now });
    expect(finding?.status).toBe('fail');
    expect(finding?.message).not.toContain('UnsupportedAlias');
    expect(finding?.message).toContain('nodeclass-schema-valid');
  });

  it('reports an error when the parameters could not be read', () => {
    const [finding] = evaluateWith({ parameters: [parameter(throttled('ssm:GetParameter'))] });
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('throttled');
  });

  it('reports an error when the Kubernetes version is unknown', () => {
    const facts = someAwsFacts({
      amis: unavailable('access-denied', 'eks:DescribeCluster denied'),
    });
    const [finding] = amiAliasResolves.evaluate(anAwsInventory([nodeClass], facts), { now });
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('eks:DescribeCluster denied');
  });

  it('is not applicable without an alias term', () => {
    const raw = aNodeClassObject({ spec: { amiSelectorTerms: [{ id: 'ami-0123' }] } });
    expect(
      amiAliasResolves.evaluate(anAwsInventory([raw], someAwsFacts()), { now })[0]?.status
    ).toBe('not-applicable');
  });
});
