import { describe, expect, it } from 'vitest';
import {
  allowedKarpenterAwsLabels,
  crdRuleRelease,
  NEWEST_KNOWN_RELEASE,
  SINCE,
} from '../../lambda/core/crd-releases.js';
import { parseKarpenterVersion } from '../../lambda/core/version.js';

const at = (raw?: string) => crdRuleRelease(parseKarpenterVersion(raw));

describe('crdRuleRelease', () => {
  it('takes the given release, with rules from the release they arrived in', () => {
    expect(at('1.8.3').basis).toBe('given');
    expect(at('1.8.3').has(SINCE.staticNodePools)).toBe(true);
    expect(at('1.8.3').has(SINCE.windows2025)).toBe(false);
    expect(at('1.9.0-rc.1').has(SINCE.windows2025)).toBe(false);
    expect(at('v1.9.0').has(SINCE.windows2025)).toBe(true);
  });

  it('defaults to the newest known release, never the main branch', () => {
    const release = at(undefined);
    expect([release.basis, release.version.raw, release.kubeletInCrd]).toEqual([
      'unknown',
      NEWEST_KNOWN_RELEASE,
      true,
    ]);
    expect(release.has(SINCE.balancedConsolidation)).toBe(true);
    expect(allowedKarpenterAwsLabels(release)).not.toContain('karpenter.k8s.aws/nitro-sandbox');
  });

  it("gives a version newer than every known release the main branch's rules", () => {
    const release = at('1.14.2');
    expect([release.basis, release.kubeletInCrd, release.label]).toEqual([
      'newer',
      false,
      "Karpenter's main branch after v1.14.1",
    ]);
    expect(allowedKarpenterAwsLabels(release)).toContain('karpenter.k8s.aws/nitro-sandbox');
    expect(at('1.14.1').kubeletInCrd).toBe(true);
  });

  it('gives a version before v1.0 the rules of v1.0.0', () => {
    const release = at('0.37.7');
    expect([release.basis, release.version.raw, release.has(SINCE.nodeClassRefNotEmpty)]).toEqual([
      'older',
      '1.0.0',
      false,
    ]);
    expect(release.note).toContain('Karpenter v0.37.7 predates the v1 API');
  });
});
