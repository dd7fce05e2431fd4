import { describe, expect, it } from 'vitest';
import type { FindingDraft } from '../../../lambda/core/check.js';
import { userDataFitsLimit } from '../../../lambda/core/checks/user-data-fits-limit.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import type { Inventory } from '../../../lambda/core/inventory.js';
import { REDACTED_USER_DATA } from '../../../lambda/core/user-data/analyze.js';
import { anInventory } from '../../support/builders.js';
import { aNodePoolObject, withNodePools } from '../../support/nodepool-builders.js';
import { aUserDataNodeClass, GOOD_USER_DATA } from '../../support/user-data-builders.js';

const now = new Date('2026-11-01T00:00:00Z');

function evaluate(inventory: Inventory): readonly FindingDraft[] {
  return userDataFitsLimit.evaluate(inventory, { now });
}

/** A shell script of about `bytes` bytes (no comments, so Bottlerocket-style trimming keeps it). */
function script(bytes: number): string {
  const line = 'echo "0123456789012345678901234567890123456789012345678901234567890123456789"\n';
  return `#!/bin/bash\n${line.repeat(Math.ceil(bytes / line.length))}`.slice(0, bytes);
}

function summary(findings: readonly FindingDraft[]) {
  return findings.map((finding) => [
    finding.resource.name,
    finding.status,
    finding.severity,
    finding.evidence?.basis,
  ]);
}

describe('user-data-fits-limit', () => {
  it('passes the documented userData of each family, with the estimated size', () => {
    // Prepare
    const objects = (['AL2', 'AL2023', 'Bottlerocket', 'Windows2022', 'Custom'] as const).map(
      (family) => aUserDataNodeClass(family, GOOD_USER_DATA[family])
    );

    // Act
    const findings = evaluate(anInventory(objects));

    // Assess
    expect(findings.map((finding) => finding.status)).toEqual(Array(5).fill('pass'));
    expect(findings[1]?.message).toMatch(
      /^The AL2023 userData Karpenter renders comes to about [\d,]+ bytes \(an estimate: Karpenter's own part assumes a 1,476-byte cluster CA bundle, an API endpoint of 80 characters, a cluster name of 40 characters\), within EC2's 16,384-byte limit\.$/
    );
    expect(findings[4]?.message).toMatch(/^spec\.userData is \d+ bytes, within/);
  });

  it('fails the oversized class only, beside a healthy control', () => {
    // Prepare
    const healthy = aUserDataNodeClass('Custom', GOOD_USER_DATA.Custom, { name: 'healthy' });
    const oversized = aUserDataNodeClass('Custom', script(20_000), { name: 'oversized' });

    // Act
    const findings = evaluate(anInventory([healthy, oversized]));

    // Assess
    expect(summary(findings)).toEqual([
      ['healthy', 'pass', undefined, undefined],
      ['oversized', 'fail', 'critical', 'exact'],
    ]);
    expect(findings[1]?.message).toContain('spec.userData alone comes to 20,000 bytes');
    expect(findings[1]?.message).toContain('UserDataSizeLimitExceeded');
    expect(findings[1]?.evidence).toMatchObject({ renderedBytes: 20_000, limitBytes: 16_384 });
    expect(findings[1]?.location).toEqual({ path: 'spec.userData' });
  });

  it('counts the bytes EC2 counts: UTF-8, not characters', () => {
    const findings = evaluate(anInventory([aUserDataNodeClass('Custom', 'é'.repeat(9000))]));
    expect(summary(findings)).toEqual([['custom-class', 'fail', 'critical', 'exact']]);
  });

  it('fails as an estimate (high) when only Karpenter’s additions push it over, and says so', () => {
    // Act: 15,500 bytes of script, under the limit alone.
    const findings = evaluate(anInventory([aUserDataNodeClass('AL2', script(15_500))]));

    // Assess
    expect(summary(findings)).toEqual([['al2-class', 'fail', 'high', 'estimate']]);
    expect(findings[0]?.message).toMatch(
      /The AL2 userData Karpenter renders comes to about [\d,]+ bytes \(an estimate: .*; spec\.userData itself is 15,[\d]{3} bytes\), over EC2's 16,384-byte limit/
    );
  });

  it('gives a notice above 90% of the limit, where Karpenter logs that it approaches it', () => {
    const findings = evaluate(anInventory([aUserDataNodeClass('AL2023', script(13_500))]));
    expect(summary(findings)).toEqual([['al2023-class', 'notice', undefined, 'estimate']]);
  });

  it('uses the cluster name and the labels and taints of the NodePools using the class', () => {
    // Prepare
    const userData = script(13_000);
    const bare = anInventory([aUserDataNodeClass('AL2', userData, { name: 'default' })], {
      cluster: { name: 'prod', aws: ok({ endpoint: 'https://127.0.0.1:8443' }) },
    });
    const pool = aNodePoolObject({ nodeClass: 'default' }) as {
      spec: { template: { metadata?: unknown; spec: Record<string, unknown> } };
    };
    pool.spec.template.metadata = {
      labels: Object.fromEntries(
        Array.from({ length: 40 }, (_, i) => [`example.com/label-${i}`, 'x'.repeat(40)])
      ),
    };
    const withPool = withNodePools(bare, [pool]);

    // Act
    const [alone] = evaluate(bare);
    const [labelled] = evaluate(withPool);

    // Assess
    // The endpoint is assumed even when known, so live and world scans estimate the same size.
    expect(alone?.message).toContain('an API endpoint of 80 characters');
    expect(alone?.message).not.toContain('cluster name of');
    expect(Number(labelled?.evidence?.renderedBytes ?? 0)).toBeGreaterThan(
      Number(alone?.evidence?.renderedBytes ?? Number.POSITIVE_INFINITY)
    );
    expect(summary([labelled as FindingDraft])).toEqual([['default', 'fail', 'high', 'estimate']]);
  });

  it('estimates Bottlerocket TOML without its comments, as Karpenter rewrites it', () => {
    const comments = `${'# a long comment that Karpenter drops when it rewrites the TOML\n'.repeat(400)}[settings.kubernetes]\nmax-pods = 110\n`;
    const findings = evaluate(anInventory([aUserDataNodeClass('Bottlerocket', comments)]));
    expect(summary(findings)).toEqual([['bottlerocket-class', 'pass', undefined, undefined]]);
    expect(findings[0]?.message).toContain('your TOML rewritten without comments and blank lines');
  });

  it('does not evaluate userData redacted by `snapshot`', () => {
    const findings = evaluate(anInventory([aUserDataNodeClass('AL2023', REDACTED_USER_DATA)]));
    expect(findings.map((finding) => finding.status)).toEqual(['not-applicable']);
  });
});
