import {
  defineCheck,
  forEachNodeClass,
  KARPENTER_VERSION_ANNOTATION,
  type NodeClassTarget,
  REGION_ANNOTATION,
  versionReadFault,
  versionUnreadDraft,
} from '../check.js';
import { IMDS_IPV6_UNSUPPORTED_REGIONS } from '../region.js';
import { isAtLeast } from '../version.js';

/** First release that omits `httpProtocolIPv6` in the regions that reject it (#8404). */
const IMDS_IPV6_FIXED_IN = '1.7.0';

/**
 * `httpProtocolIPv6` as the API server stores the object: after the installed CRD's defaults when
 * the scan has the CRD (the isolated-region workaround removes that default), else the released
 * CRDs' default `disabled`.
 */
function storedIpv6(
  target: NodeClassTarget,
  explicit: string | undefined
): { readonly value: string | undefined; readonly crd?: string } {
  const admission = target.entry.admission;
  if (admission === undefined) return { value: explicit ?? 'disabled' };
  const spec = (admission.defaulted as { spec?: { metadataOptions?: unknown } } | undefined)?.spec;
  const options = spec?.metadataOptions as { httpProtocolIPv6?: unknown } | undefined;
  const value = options?.httpProtocolIPv6;
  return { value: typeof value === 'string' ? value : explicit, crd: admission.crd };
}

/** `from annotation …` when the value came from the object's context annotation. */
function origin(target: NodeClassTarget, annotation: string): string | undefined {
  return target.overrides.some((override) => override.annotation === annotation)
    ? `from annotation ${annotation}`
    : undefined;
}

/**
 * Launches do not carry `httpProtocolIPv6` into a region whose EC2 rejects it. Before Karpenter
 * v1.7.0 the field is always sent (the CRD default fills it in, and even `disabled` is refused);
 * from v1.7.0 Karpenter omits it there. An unknown Karpenter version is treated as affected.
 * Region and version come from the cluster, or from the object's `nodeclass-scanner/region` and
 * `nodeclass-scanner/karpenter-version` annotations. With the cluster's installed CRD, the field
 * is read after that CRD's defaults: a CRD whose default was removed (the documented workaround)
 * sends nothing.
 */
export const imdsIpv6Supported = defineCheck({
  id: 'imds-ipv6-supported',
  title: 'IMDS httpProtocolIPv6 is not sent where EC2 rejects it (ISO regions, Karpenter < v1.7.0)',
  group: 'spec',
  severity: 'critical',
  inputs: ['spec'],
  rationale:
    'EC2 in the ISO regions rejects any launch that sets httpProtocolIPv6, even to disabled. Karpenter before v1.7.0 always sends the field (the CRD default fills it in), so every launch there fails with UnsupportedOperation and no node starts.',
  remediation:
    'Upgrade Karpenter to v1.7.0 or later; on older versions remove httpProtocolIPv6 from the CRD default (kubectl patch crd) so it is not sent.',
  references: [
    '#7081',
    '#7667',
    '#5700',
    '#8404',
    '#8631',
    'https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/amifamily/resolver.go',
  ],
  material: ['region', 'httpProtocolIPv6'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, ({ spec }, target) => {
      const { resource, cluster } = target;
      const region = cluster.region;
      if (region === undefined) {
        return [
          {
            status: 'not-applicable',
            resource,
            message: `Region unknown: pass --region or annotate the object with ${REGION_ANNOTATION}.`,
          },
        ];
      }
      const regionOrigin = origin(target, REGION_ANNOTATION);
      const regionText = regionOrigin ? `${region} (${regionOrigin})` : region;
      if (!IMDS_IPV6_UNSUPPORTED_REGIONS.includes(region)) {
        return [
          {
            status: 'pass',
            resource,
            message: `EC2 accepts httpProtocolIPv6 in ${regionText}.`,
            evidence: { region },
          },
        ];
      }
      // The API server defaults the field, so it is present even when the manifest omits it,
      // unless the installed CRD's default was removed.
      const explicit = spec.metadataOptions?.httpProtocolIPv6;
      const stored = storedIpv6(target, explicit);
      const version = cluster.karpenterVersion;
      if (stored.value === undefined) {
        return [
          {
            status: 'pass',
            resource,
            message: `The installed CRD (${stored.crd}) gives httpProtocolIPv6 no default and the object does not set it, so Karpenter does not send it in ${regionText}.`,
            evidence: { region, httpProtocolIPv6: 'unset', crd: stored.crd },
          },
        ];
      }
      const faulted = versionReadFault(cluster);
      if (faulted) return [versionUnreadDraft(resource, faulted, cluster)];
      const httpProtocolIPv6 = stored.value;
      const evidence = {
        region,
        httpProtocolIPv6,
        karpenterVersion: version?.raw ?? 'unknown',
        fixedIn: `v${IMDS_IPV6_FIXED_IN}`,
        ...(stored.crd === undefined ? {} : { crd: stored.crd }),
      };
      const defaultedBy =
        explicit === undefined && stored.crd !== undefined
          ? ` (the default of the installed CRD ${stored.crd})`
          : '';
      const versionOrigin = origin(target, KARPENTER_VERSION_ANNOTATION);
      if (version && isAtLeast(version, IMDS_IPV6_FIXED_IN)) {
        return [
          {
            status: 'pass',
            resource,
            message: `Karpenter ${version.raw}${versionOrigin ? ` (${versionOrigin})` : ''} omits httpProtocolIPv6 in ${regionText}.`,
            evidence,
          },
        ];
      }
      const who = version
        ? `Karpenter ${version.raw} (< v${IMDS_IPV6_FIXED_IN}${versionOrigin ? `, ${versionOrigin}` : ''})`
        : `The Karpenter version is unknown, so the worst case (< v${IMDS_IPV6_FIXED_IN}) is assumed: Karpenter`;
      return [
        {
          status: 'fail',
          resource,
          message: `${who} sends httpProtocolIPv6=${httpProtocolIPv6}${defaultedBy} in ${regionText}, where EC2 rejects it (UnsupportedOperation) and every launch fails.`,
          ...(version
            ? {}
            : {
                remediation: `Pass --karpenter-version (or annotate ${KARPENTER_VERSION_ANNOTATION}) if Karpenter is v${IMDS_IPV6_FIXED_IN}+; otherwise upgrade Karpenter to v${IMDS_IPV6_FIXED_IN} or later.`,
              }),
          evidence,
          location: {
            path: explicit === undefined ? 'spec' : 'spec.metadataOptions.httpProtocolIPv6',
          },
        },
      ];
    }),
});
