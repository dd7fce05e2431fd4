import { describe, expect, it } from 'vitest';
import type { AdmissionVerdict } from '../../../lambda/core/admission/types.js';
import { imdsIpv6Supported } from '../../../lambda/core/checks/imds-ipv6-supported.js';
import type { ClusterContext, Inventory } from '../../../lambda/core/inventory.js';
import { partitionOf } from '../../../lambda/core/region.js';
import { parseKarpenterVersion } from '../../../lambda/core/version.js';
import { aNodeClassObject, anInventory } from '../../support/builders.js';
import { aControllerUnreadState, CONTROLLER_UNREAD } from '../../support/read-faults.js';

const now = new Date('2026-11-01T00:00:00Z');

const ISO_REGIONS = [
  'us-iso-east-1',
  'us-iso-west-1',
  'us-isob-east-1',
  'us-isob-west-1',
  'us-isof-south-1',
  'us-isof-east-1',
];

function cluster(region: string | undefined, version: string | undefined): Partial<ClusterContext> {
  const karpenterVersion = parseKarpenterVersion(version);
  return {
    ...(region ? { region, partition: partitionOf(region) } : {}),
    ...(karpenterVersion ? { karpenterVersion } : {}),
  };
}

function evaluate(
  context: Partial<ClusterContext>,
  overrides: { spec?: Record<string, unknown>; metadata?: Record<string, unknown> } = {}
) {
  const raw = aNodeClassObject(overrides);
  return imdsIpv6Supported.evaluate(anInventory([raw], { cluster: context }), { now });
}

describe('imds-ipv6-supported', () => {
  it.each(ISO_REGIONS)('fails in %s on Karpenter 1.6.9', (region) => {
    // Act
    const [finding] = evaluate(cluster(region, '1.6.9'));

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.severity).toBeUndefined();
    expect(finding?.message).toContain(`Karpenter 1.6.9 (< v1.7.0)`);
    expect(finding?.message).toContain(region);
    expect(finding?.evidence).toMatchObject({ region, karpenterVersion: '1.6.9' });
  });

  it.each(ISO_REGIONS)('passes in %s on Karpenter v1.7.0', (region) => {
    const [finding] = evaluate(cluster(region, 'v1.7.0'));
    expect(finding?.status).toBe('pass');
    expect(finding?.message).toContain('omits httpProtocolIPv6');
  });

  it.each([
    ['1.6.9', 'fail'],
    ['1.7.0-rc.1', 'fail'],
    ['1.7.0', 'pass'],
    ['1.7.1', 'pass'],
    ['v1.14.1', 'pass'],
    ['0.37.0', 'fail'],
  ])('at the v1.7.0 boundary, Karpenter %s → %s', (version, status) => {
    const [finding] = evaluate(cluster('us-isob-east-1', version));
    expect(finding?.status).toBe(status);
  });

  it('assumes the worst case for an unknown Karpenter version, and says so', () => {
    // Act
    const [finding] = evaluate(cluster('us-iso-east-1', undefined));

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('version is unknown');
    expect(finding?.message).toContain('worst case');
    expect(finding?.evidence).toMatchObject({ karpenterVersion: 'unknown' });
    expect(finding?.remediation).toContain('--karpenter-version');
  });

  it('reports the defaulted value when metadataOptions is omitted (the CRD fills it in)', () => {
    const [finding] = evaluate(cluster('us-iso-east-1', '1.5.0'), {
      spec: { metadataOptions: undefined },
    });
    expect(finding?.status).toBe('fail');
    expect(finding?.evidence).toMatchObject({ httpProtocolIPv6: 'disabled' });
    expect(finding?.location).toEqual({ path: 'spec' });
  });

  it('points at the field when the manifest sets it', () => {
    const [finding] = evaluate(cluster('us-iso-east-1', '1.5.0'), {
      spec: { metadataOptions: { httpProtocolIPv6: 'enabled' } },
    });
    expect(finding?.message).toContain('httpProtocolIPv6=enabled');
    expect(finding?.location).toEqual({ path: 'spec.metadataOptions.httpProtocolIPv6' });
  });

  it.each(['us-east-1', 'eu-isoe-west-1', 'us-gov-west-1', 'cn-north-1'])(
    'passes in %s whatever the version',
    (region) => {
      const [finding] = evaluate(cluster(region, '0.37.0'));
      expect(finding?.status).toBe('pass');
    }
  );

  it('is not applicable when the region is unknown', () => {
    const [finding] = evaluate(cluster(undefined, '1.6.0'));
    expect(finding?.status).toBe('not-applicable');
    expect(finding?.message).toContain('nodeclass-scanner/region');
  });

  it('uses the region and version annotations on the object, and says where they came from', () => {
    // Act
    const [finding] = evaluate(cluster('us-east-1', '1.10.0'), {
      metadata: {
        annotations: {
          'nodeclass-scanner/region': 'us-isof-south-1',
          'nodeclass-scanner/karpenter-version': '1.6.2',
        },
      },
    });

    // Assess
    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain(
      'Karpenter 1.6.2 (< v1.7.0, from annotation nodeclass-scanner/karpenter-version)'
    );
    expect(finding?.message).toContain(
      'us-isof-south-1 (from annotation nodeclass-scanner/region)'
    );
  });

  it('says when a passing version came from the annotation', () => {
    const [finding] = evaluate(cluster('us-iso-east-1', '1.6.0'), {
      metadata: { annotations: { 'nodeclass-scanner/karpenter-version': 'v1.9.0' } },
    });
    expect(finding?.status).toBe('pass');
    expect(finding?.message).toBe(
      'Karpenter v1.9.0 (from annotation nodeclass-scanner/karpenter-version) omits httpProtocolIPv6 in us-iso-east-1.'
    );
  });

  it('ignores an invalid version annotation and keeps the cluster version', () => {
    const [finding] = evaluate(cluster('us-iso-east-1', '1.8.0'), {
      metadata: { annotations: { 'nodeclass-scanner/karpenter-version': 'latest' } },
    });
    expect(finding?.status).toBe('pass');
    expect(finding?.message).toContain('Karpenter 1.8.0 omits');
  });

  describe("with the cluster's installed CRD", () => {
    const CRD = 'ec2nodeclasses.karpenter.k8s.aws from cluster iso';

    /** The object as the installed CRD stores it: `defaulted` is what its defaults made of it. */
    function withVerdict(
      raw: Record<string, unknown>,
      defaultedMetadataOptions: Record<string, unknown> | undefined
    ): Inventory {
      const inventory = anInventory([raw], { cluster: cluster('us-iso-west-1', '1.6.2') });
      const spec = (raw.spec ?? {}) as Record<string, unknown>;
      const verdict: AdmissionVerdict = {
        crd: CRD,
        version: 'v1',
        violations: [],
        pruned: [],
        defaulted: {
          ...raw,
          spec: {
            ...spec,
            ...(defaultedMetadataOptions === undefined
              ? {}
              : { metadataOptions: defaultedMetadataOptions }),
          },
        },
        openPaths: [],
        skippedTransitionRules: 0,
      };
      return {
        ...inventory,
        nodeClasses: inventory.nodeClasses.map((entry) => ({ ...entry, admission: verdict })),
      };
    }

    it('resolves when the CRD default was removed (the isolated-region workaround) and the object sets nothing', () => {
      // Prepare
      const raw = aNodeClassObject({ spec: { metadataOptions: undefined } });

      // Act
      const [finding] = imdsIpv6Supported.evaluate(withVerdict(raw, undefined), { now });

      // Assess
      expect(finding?.status).toBe('pass');
      expect(finding?.message).toBe(
        `The installed CRD (${CRD}) gives httpProtocolIPv6 no default and the object does not set it, so Karpenter does not send it in us-iso-west-1.`
      );
      expect(finding?.evidence).toMatchObject({ httpProtocolIPv6: 'unset', crd: CRD });
    });

    it('stays flagged when the CRD still defaults the field, and names that default', () => {
      // Prepare
      const raw = aNodeClassObject({ spec: { metadataOptions: undefined } });
      const defaulted = { httpEndpoint: 'enabled', httpProtocolIPv6: 'disabled' };

      // Act
      const [finding] = imdsIpv6Supported.evaluate(withVerdict(raw, defaulted), { now });

      // Assess
      expect(finding?.status).toBe('fail');
      expect(finding?.message).toContain(
        `sends httpProtocolIPv6=disabled (the default of the installed CRD ${CRD}) in us-iso-west-1`
      );
      expect(finding?.evidence).toMatchObject({ httpProtocolIPv6: 'disabled', crd: CRD });
      expect(finding?.location).toEqual({ path: 'spec' });
    });

    it('stays flagged when the object sets the field itself, whatever the CRD defaults', () => {
      // Prepare
      const raw = aNodeClassObject({ spec: { metadataOptions: { httpProtocolIPv6: 'enabled' } } });

      // Act
      const [finding] = imdsIpv6Supported.evaluate(
        withVerdict(raw, { httpProtocolIPv6: 'enabled' }),
        { now }
      );

      // Assess
      expect(finding?.status).toBe('fail');
      expect(finding?.message).toContain('sends httpProtocolIPv6=enabled in us-iso-west-1');
      expect(finding?.location).toEqual({ path: 'spec.metadataOptions.httpProtocolIPv6' });
    });
  });
});

describe('imds-ipv6-supported: the controller Deployment could not be read', () => {
  const iso = cluster('us-iso-east-1', undefined);

  it('reports an error with a read fault instead of assuming an affected version', () => {
    const findings = evaluate({ ...iso, state: aControllerUnreadState() });
    expect(findings.map((finding) => finding.status)).toEqual(['error']);
    expect(findings[0]?.readFault).toEqual(CONTROLLER_UNREAD);
    expect(findings[0]?.causedBy?.checkId).toBe('scanner-can-read-cluster');
  });

  it('judges by --karpenter-version when it is given, and passes where EC2 accepts the field', () => {
    const state = aControllerUnreadState();
    expect(evaluate({ ...cluster('us-iso-east-1', '1.6.9'), state })[0]?.status).toBe('fail');
    expect(evaluate({ ...cluster('us-east-1', undefined), state })[0]?.status).toBe('pass');
  });

  it('assumes the worst case, as before, when the version is simply not given', () => {
    const [finding] = evaluate(iso);
    expect(finding?.status).toBe('fail');
    expect(finding?.readFault).toBeUndefined();
  });
});
