import { describe, expect, it } from 'vitest';
import {
  rootVolumeFitsAmi,
  volumeSizeGiB,
} from '../../../lambda/core/checks/root-volume-fits-ami.js';
import { ok } from '../../../lambda/core/facts/slice.js';
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

const now = SCAN_TIME;
const image = anImage({ rootDeviceName: '/dev/xvda', rootVolumeSizeGiB: 30 });
const facts = awsFactsWithImages([image]);

function evaluateWith(spec: Record<string, unknown>) {
  return rootVolumeFitsAmi.evaluate(anAwsInventory([aNodeClassObject({ spec })], facts), { now });
}

describe('root-volume-fits-ami', () => {
  it('passes when the root mapping is at least the snapshot size', () => {
    const [finding] = evaluateWith({
      blockDeviceMappings: [
        { deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '50Gi' } },
      ],
    });
    expect(finding?.status).toBe('pass');
  });

  it('fails when the root mapping is smaller than the snapshot', () => {
    const [finding] = evaluateWith({
      blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { volumeSize: '20Gi' } }],
    });
    expect(finding?.status).toBe('fail');
    expect(finding?.location).toEqual({ path: 'spec.blockDeviceMappings[0].ebs.volumeSize' });
  });

  it("fails with Karpenter's 20Gi AL2023 default for a 30 GiB custom image", () => {
    const [finding] = evaluateWith({ amiSelectorTerms: [{ alias: 'al2023@latest' }] });
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain("Karpenter's default mapping");
  });

  it("uses spec.amiFamily over the alias: Custom keeps the image's own mappings (no default)", () => {
    // Karpenter's AMIFamily() returns spec.amiFamily when set; Custom has no default mappings.
    const [finding] = evaluateWith({
      amiFamily: 'Custom',
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
    });
    expect(finding?.status).toBe('not-applicable');
  });

  it('is not applicable when no mapping overrides the root device', () => {
    const [finding] = evaluateWith({
      amiFamily: 'Custom',
      amiSelectorTerms: [{ name: 'x-*' }],
      blockDeviceMappings: [{ deviceName: '/dev/xvdb', ebs: { volumeSize: '100Gi' } }],
    });
    expect(finding?.status).toBe('not-applicable');
  });

  it('reports an error when images could not be read', () => {
    const inventory = anAwsInventory(
      [aNodeClassObject()],
      someAwsFacts({ amis: ok({ ...anAmiFacts(), available: throttled() }) })
    );
    expect(rootVolumeFitsAmi.evaluate(inventory, { now })[0]?.status).toBe('error');
  });

  it('converts quantities as Karpenter does (bytes / 2^30, rounded up)', () => {
    expect(volumeSizeGiB('200G')).toBe(187);
    expect(volumeSizeGiB('200Gi')).toBe(200);
    expect(volumeSizeGiB('1Ti')).toBe(1024);
    expect(volumeSizeGiB('lots')).toBeUndefined();
  });
});
