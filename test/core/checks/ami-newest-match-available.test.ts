import { describe, expect, it } from 'vitest';
import { amiNewestMatchAvailable } from '../../../lambda/core/checks/ami-newest-match-available.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import { parseKarpenterVersion } from '../../../lambda/core/version.js';
import {
  anAmiFacts,
  anAwsInventory,
  anImage,
  awsFactsWithImages,
  SCAN_TIME,
  someAwsFacts,
  throttled,
} from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';
import { aControllerUnreadState, CONTROLLER_UNREAD } from '../../support/read-faults.js';

const now = SCAN_TIME;
const nodeClass = aNodeClassObject({ spec: { amiSelectorTerms: [{ name: 'team-node-*' }] } });
const current = anImage({ id: 'ami-0old', creationDate: '2026-10-01T00:00:00Z' });
const pending = anImage({ id: 'ami-0new', state: 'pending', creationDate: '2026-10-30T00:00:00Z' });
const withPending = awsFactsWithImages([current, pending]);

function evaluate(version: string | undefined) {
  const karpenterVersion = parseKarpenterVersion(version);
  return amiNewestMatchAvailable.evaluate(
    anAwsInventory([nodeClass], withPending, karpenterVersion ? { karpenterVersion } : {}),
    { now }
  );
}

describe('ami-newest-match-available', () => {
  it('passes when the newest matching image is available', () => {
    const [finding] = amiNewestMatchAvailable.evaluate(
      anAwsInventory([nodeClass], awsFactsWithImages([current])),
      { now }
    );
    expect(finding?.status).toBe('pass');
  });

  it.each([['1.2.1'], ['v1.1.2'], ['1.0.7']])(
    'is critical on affected Karpenter %s, which selects the pending image',
    (version) => {
      const [finding] = evaluate(version);
      expect(finding?.status).toBe('fail');
      expect(finding?.severity).toBe('critical');
      expect(finding?.message).toContain('ami-0new');
    }
  );

  it('assumes an affected version when the version is unknown', () => {
    const [finding] = evaluate(undefined);
    expect(finding?.severity).toBe('critical');
    expect(finding?.evidence).toMatchObject({ karpenterVersion: 'unknown', affectedVersion: true });
  });

  it.each([['1.2.2'], ['1.3.0'], ['1.14.1']])(
    'is an info notice on fixed Karpenter %s: nothing fails',
    (version) => {
      const [finding] = evaluate(version);
      expect(finding?.status).toBe('notice');
      expect(finding?.severity).toBe('info');
      expect(finding?.message).toContain('rolls every node');
    }
  );

  it('does not tell a fixed version to upgrade Karpenter', () => {
    const [finding] = evaluate('1.6.2');
    expect(finding?.remediation).not.toMatch(/upgrade/i);
    expect(finding?.remediation).toContain('pin');
  });

  it('tells an affected version to upgrade to a fixed release', () => {
    const [finding] = evaluate('1.2.1');
    expect(finding?.remediation).toMatch(/Upgrade Karpenter to v1\.2\.2/);
  });

  it('does not claim the version is affected when it is unknown', () => {
    const [finding] = evaluate(undefined);
    expect(finding?.message).toContain('unknown');
    expect(finding?.message).not.toMatch(/unknown version, < v1\.2\.2\)/);
    expect(finding?.remediation).toContain('--karpenter-version');
  });

  it('does not promise that a failed image will be selected once available', () => {
    const failed = anImage({
      id: 'ami-0bad',
      state: 'failed',
      creationDate: '2026-10-30T00:00:00Z',
    });
    const facts = awsFactsWithImages([current, failed]);
    const karpenterVersion = parseKarpenterVersion('1.6.2');
    const [finding] = amiNewestMatchAvailable.evaluate(
      anAwsInventory([nodeClass], facts, karpenterVersion ? { karpenterVersion } : {}),
      { now }
    );
    expect(finding?.status).toBe('notice');
    expect(finding?.severity).toBe('info');
    expect(finding?.message).toContain('failed');
    expect(finding?.message).not.toContain('once it is');
    expect(finding?.message).toContain('never becomes available');
  });

  it('reports an error when the stateless queries were throttled', () => {
    const facts = someAwsFacts({ amis: ok({ ...anAmiFacts(), ignoringState: throttled() }) });
    const [finding] = amiNewestMatchAvailable.evaluate(anAwsInventory([nodeClass], facts), { now });
    expect(finding?.status).toBe('error');
    expect(finding?.message).toContain('throttled');
  });
});

describe('ami-newest-match-available: the controller Deployment could not be read', () => {
  const evaluateIn = (cluster: Parameters<typeof anAwsInventory>[2]) =>
    amiNewestMatchAvailable.evaluate(anAwsInventory([nodeClass], withPending, cluster), { now });

  it('reports an error with a read fault instead of assuming an affected version', () => {
    const findings = evaluateIn({ state: aControllerUnreadState() });
    expect(findings.map((finding) => finding.status)).toEqual(['error']);
    expect(findings[0]?.readFault).toEqual(CONTROLLER_UNREAD);
  });

  it('judges by --karpenter-version when it is given', () => {
    const karpenterVersion = parseKarpenterVersion('1.2.1');
    const [finding] = evaluateIn({
      state: aControllerUnreadState(),
      ...(karpenterVersion ? { karpenterVersion } : {}),
    });
    expect(finding?.status).toBe('fail');
    expect(finding?.readFault).toBeUndefined();
  });

  it('assumes an affected version, as before, when the version is simply not given', () => {
    const [finding] = evaluateIn({});
    expect(finding?.status).toBe('fail');
    expect(finding?.severity).toBe('critical');
    expect(finding?.readFault).toBeUndefined();
  });
});
