import { describe, expect, it } from 'vitest';
import {
  CEL_RESTRICTED_TAG_RULES,
  RUNTIME_RESTRICTED_TAG_PATTERNS,
  tagsNotRestricted,
} from '../../../lambda/core/checks/tags-not-restricted.js';
import { aNodeClassObject, anInventory } from '../../support/builders.js';

const now = new Date('2026-11-01T00:00:00Z');

function evaluate(tags: Record<string, string> | undefined) {
  const raw = aNodeClassObject({ spec: { tags } });
  return tagsNotRestricted.evaluate(anInventory([raw]), { now });
}

describe('tags-not-restricted', () => {
  it('passes without tags', () => {
    const [finding] = evaluate(undefined);
    expect(finding?.status).toBe('pass');
    expect(finding?.message).toBe('No custom tags.');
  });

  it.each([
    'team',
    'Name',
    'kubernetes.io/role',
    'Kubernetes.io/cluster/demo',
    'karpenter.sh/nodepool-owner',
    'karpenter.sh/nodepoolx',
    'karpenter.sh/capacity-type',
    'eks:eks-cluster-name-x',
    'eks:cluster-name',
    'karpenter.k8s.aws/ec2nodeclass/x',
    'x-karpenter.sh/nodeclaim',
  ])('passes for the near miss %s', (key) => {
    const findings = evaluate({ [key]: 'v' });
    expect(findings.map((finding) => finding.status)).toEqual(['pass']);
  });

  it.each([
    ['kubernetes.io/cluster/demo', 'kubernetes.io/cluster/'],
    ['kubernetes.io/cluster/my_cluster-1', 'kubernetes.io/cluster/'],
    ['karpenter.sh/nodepool', 'karpenter.sh/nodepool'],
    ['karpenter.sh/nodeclaim', 'karpenter.sh/nodeclaim'],
    ['eks:eks-cluster-name', 'eks:eks-cluster-name'],
    ['karpenter.k8s.aws/ec2nodeclass', 'karpenter.k8s.aws/ec2nodeclass'],
  ])('fails for %s (CEL and runtime pattern)', (key, matching) => {
    // Act
    const [finding] = evaluate({ team: 'platform', [key]: 'x' });

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain(`tag contains a restricted tag matching ${matching}`);
    expect(finding?.message).toContain('TagValidationFailed');
    expect(finding?.evidence).toMatchObject({ key, runtimePattern: expect.any(String) });
    expect(finding?.location).toEqual({ path: `spec.tags.${key}` });
    expect(finding?.discriminator).toBe(`spec.tags#${key}`);
  });

  it.each([
    'kubernetes.io/clusterx',
    'kubernetes.io/cluster',
    'kubernetes.io/cluster/',
    'kubernetes.io/cluster/-leading-dash',
    'kubernetes.io/cluster/a/b',
  ])("fails for %s through the CEL rule startsWith('kubernetes.io/cluster') alone", (key) => {
    // Act
    const [finding] = evaluate({ [key]: 'owned' });

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain("!k.startsWith('kubernetes.io/cluster')");
    expect(finding?.message).toContain('runtime pattern would accept it');
    expect(finding?.evidence).not.toHaveProperty('runtimePattern');
  });

  it('fails for an empty key', () => {
    const [finding] = evaluate({ '': 'v' });
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain("empty tag keys aren't supported");
    expect(finding?.location).toEqual({ path: 'spec.tags' });
  });

  it('reports one finding per offending key', () => {
    // Act
    const findings = evaluate({
      'karpenter.sh/nodepool': 'a',
      team: 'b',
      'eks:eks-cluster-name': 'c',
    });

    // Assess
    expect(findings.map((finding) => finding.evidence?.key)).toEqual([
      'karpenter.sh/nodepool',
      'eks:eks-cluster-name',
    ]);
    expect(new Set(findings.map((finding) => finding.discriminator)).size).toBe(2);
  });

  it('treats every runtime-restricted key as CEL-restricted too', () => {
    const samples = [
      'kubernetes.io/cluster/demo',
      'karpenter.sh/nodepool',
      'eks:eks-cluster-name',
      'karpenter.k8s.aws/ec2nodeclass',
      'karpenter.sh/nodeclaim',
    ];
    for (const key of samples) {
      expect(RUNTIME_RESTRICTED_TAG_PATTERNS.some((pattern) => pattern.test(key))).toBe(true);
      expect(CEL_RESTRICTED_TAG_RULES.some((rule) => rule.matches(key))).toBe(true);
    }
  });
});
