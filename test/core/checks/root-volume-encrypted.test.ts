import { describe, expect, it } from 'vitest';
import { rootVolumeEncrypted } from '../../../lambda/core/checks/root-volume-encrypted.js';
import { aNodeClassObject, anInventory } from '../../support/builders.js';

const now = new Date('2026-11-01T00:00:00Z');

function evaluate(spec: Record<string, unknown>) {
  return rootVolumeEncrypted.evaluate(anInventory([aNodeClassObject({ spec })]), { now });
}

const ebs = (extra: Record<string, unknown> = {}) => ({ volumeSize: '100Gi', ...extra });

describe('root-volume-encrypted', () => {
  it("passes without blockDeviceMappings (Karpenter's defaults are encrypted)", () => {
    const [finding] = evaluate({});
    expect(finding?.status).toBe('pass');
    expect(finding?.message).toContain('default');
  });

  it("says a Custom family without mappings uses the AMI's own mappings", () => {
    const [finding] = evaluate({ amiFamily: 'Custom', amiSelectorTerms: [{ id: 'ami-0abc' }] });
    expect(finding?.status).toBe('pass');
    expect(finding?.message).toContain('custom AMI');
  });

  it('passes for an explicitly encrypted root volume', () => {
    const [finding] = evaluate({
      blockDeviceMappings: [
        { deviceName: '/dev/xvda', rootVolume: true, ebs: ebs({ encrypted: true }) },
      ],
    });
    expect(finding?.status).toBe('pass');
    expect(finding?.evidence).toBeUndefined();
  });

  it('fails for rootVolume: true with encrypted: false', () => {
    // Act
    const [finding] = evaluate({
      blockDeviceMappings: [
        { deviceName: '/dev/xvdb', ebs: ebs({ encrypted: true }) },
        { deviceName: '/dev/xvdc', rootVolume: true, ebs: ebs({ encrypted: false }) },
      ],
    });

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('/dev/xvdc');
    expect(finding?.message).toContain('RunInstancesAuthCheckFailed');
    expect(finding?.location).toEqual({ path: 'spec.blockDeviceMappings[1].ebs.encrypted' });
    expect(finding?.remediation).toBe('Set spec.blockDeviceMappings[1].ebs.encrypted: true');
  });

  it("fails for the family's root device when no mapping is flagged", () => {
    const [finding] = evaluate({
      blockDeviceMappings: [
        { deviceName: '/dev/xvdb', ebs: ebs() },
        { deviceName: '/dev/xvda', ebs: ebs({ encrypted: false }) },
      ],
    });
    expect(finding?.status).toBe('fail');
    expect(finding?.location?.path).toBe('spec.blockDeviceMappings[1].ebs.encrypted');
  });

  it.each([
    ['bottlerocket@v1.30.0', '/dev/xvdb'],
    ['windows2022@latest', '/dev/sda1'],
  ])('knows the root device of %s (%s)', (alias, device) => {
    const [finding] = evaluate({
      amiSelectorTerms: [{ alias }],
      blockDeviceMappings: [
        { deviceName: '/dev/xvdz', ebs: ebs({ encrypted: false }) },
        { deviceName: device, ebs: ebs({ encrypted: false }) },
      ],
    });
    expect(finding?.status).toBe('fail');
    expect(finding?.evidence).toMatchObject({ deviceName: device });
  });

  it('treats the only mapping as the root volume', () => {
    const [finding] = evaluate({
      amiFamily: 'Custom',
      amiSelectorTerms: [{ id: 'ami-0abc' }],
      blockDeviceMappings: [{ deviceName: '/dev/sda1', ebs: ebs({ encrypted: false }) }],
    });
    expect(finding?.status).toBe('fail');
  });

  it('ignores an unencrypted non-root volume', () => {
    const [finding] = evaluate({
      blockDeviceMappings: [
        { deviceName: '/dev/xvda', rootVolume: true, ebs: ebs({ encrypted: true }) },
        { deviceName: '/dev/xvdb', ebs: ebs({ encrypted: false }) },
      ],
    });
    expect(finding?.status).toBe('pass');
  });

  it('passes with a note when encrypted is omitted (account default decides)', () => {
    // Act
    const [finding] = evaluate({
      blockDeviceMappings: [{ deviceName: '/dev/xvda', rootVolume: true, ebs: ebs() }],
    });

    // Assess
    expect(finding?.status).toBe('pass');
    expect(finding?.message).toContain('encryption-by-default');
    expect(finding?.evidence).toMatchObject({ devices: ['/dev/xvda'] });
    expect(String(finding?.evidence?.note)).toContain('Set encrypted: true');
  });

  it('is not applicable when no mapping is identifiable as root', () => {
    const [finding] = evaluate({
      amiFamily: 'Custom',
      amiSelectorTerms: [{ id: 'ami-0abc' }],
      blockDeviceMappings: [
        { deviceName: '/dev/sdb', ebs: ebs({ encrypted: false }) },
        { deviceName: '/dev/sdc', ebs: ebs() },
      ],
    });
    expect(finding?.status).toBe('not-applicable');
    expect(finding?.message).toContain('rootVolume: true');
  });
});
