import {
  defineCheck,
  forEachNodeClass,
  KARPENTER_VERSION_ANNOTATION,
  versionReadFault,
  versionUnreadDraft,
} from '../check.js';
import type { SelectedImage } from '../facts/aws.js';
import { isAtLeast } from '../version.js';
import { awsFactsOf, list, withSlice } from './support/aws-facts.js';

/** Karpenter added the `state=available` filter in v1.2.2 (cherry-pick #7685) and v1.3.0 (#7672). */
const FIXED_IN = '1.2.2';

const UPGRADE = `Upgrade Karpenter to v${FIXED_IN} (1.2 line) or v1.3.0+; until then pin spec.amiSelectorTerms to an available image id.`;

function describeImage(item: SelectedImage): string {
  return `${item.image.id} (${item.image.name ?? 'unnamed'}, ${item.image.state}, ${item.architecture})`;
}

/**
 * Ignoring state, the image Karpenter's ordering puts first is `available`. Karpenter < v1.2.2
 * selects it anyway (a `pending` Packer build, or a `failed` one) and every launch fails (#7652).
 * Fixed versions skip it: a pending image then only means every node rolls once it is available.
 */
export const amiNewestMatchAvailable = defineCheck({
  id: 'ami-newest-match-available',
  title: 'The newest image matching the AMI selector is available',
  group: 'aws',
  severity: 'high',
  inputs: ['aws'],
  rationale:
    'Karpenter before v1.2.2 does not filter images by state, so a pending or failed build that is the newest match is selected and every launch fails until it becomes available or stops matching. Later versions skip it, but roll every node once a pending build becomes available.',
  remediation: UPGRADE,
  references: ['#7652', '#7672', '#7685'],
  material: ['images[].id', 'images[].state', 'reason'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, (_nodeClass, target) => {
      const { resource, cluster } = target;
      return withSlice(resource, 'AMI facts', awsFactsOf(target).amis, (amis) =>
        withSlice(
          resource,
          'images ignoring state (DescribeImages)',
          amis.ignoringState,
          (selection) => {
            const notAvailable = selection.selected.filter(
              (item) => item.image.state !== 'available'
            );
            if (notAvailable.length === 0) {
              return [
                {
                  status: 'pass',
                  resource,
                  message:
                    selection.selected.length === 0
                      ? 'No image matches, whatever its state.'
                      : 'The newest matching image is available for every architecture.',
                },
              ];
            }
            const faulted = versionReadFault(cluster);
            if (faulted) return [versionUnreadDraft(resource, faulted, cluster)];
            const version = cluster.karpenterVersion;
            const affected = version === undefined || !isAtLeast(version, FIXED_IN);
            const images = list(notAvailable.map(describeImage));
            const pendingOnly = notAvailable.every((item) => item.image.state === 'pending');
            const anyPending = notAvailable.some((item) => item.image.state === 'pending');
            const evidence = {
              images: notAvailable.map((item) => ({
                id: item.image.id,
                name: item.image.name,
                state: item.image.state,
                architecture: item.architecture,
                creationDate: item.image.creationDate,
              })),
              karpenterVersion: version?.raw ?? 'unknown',
              affectedVersion: affected,
            };
            if (affected) {
              const who =
                version === undefined
                  ? `The Karpenter version is unknown; if it is older than v${FIXED_IN}, Karpenter selects`
                  : `Karpenter ${version.raw} (< v${FIXED_IN}) selects`;
              const until = pendingOnly
                ? 'until it becomes available'
                : 'until it no longer matches (a failed or deregistered image never becomes available)';
              return [
                {
                  status: 'fail',
                  resource,
                  severity: 'critical',
                  message: `${who} ${images}, which is not available: launches fail ${until}.`,
                  remediation:
                    version === undefined
                      ? `Pass --karpenter-version (or annotate ${KARPENTER_VERSION_ANNOTATION}) if Karpenter is v${FIXED_IN}+; otherwise: ${UPGRADE}`
                      : UPGRADE,
                  evidence,
                },
              ];
            }
            const skips = `Karpenter ${version.raw} skips it (it queries state=available only)`;
            // Nothing fails: Karpenter skips the image. What is left is advice (when nodes will
            // roll, what to clean up), so it is a notice, not a failure.
            return [
              {
                status: 'notice',
                resource,
                severity: 'info',
                message: pendingOnly
                  ? `Newest matching image ${images} is still pending. ${skips} until it is available, then selects it and rolls every node.`
                  : `Newest matching image ${images} is not available. ${skips}; a failed or deregistered image never becomes available${anyPending ? ', a pending one is selected once available and rolls every node' : ''}.`,
                remediation: anyPending
                  ? 'Nothing fails now. To roll nodes deliberately rather than when the build completes, pin spec.amiSelectorTerms to an image id.'
                  : 'Nothing fails now; deregister the failed image (or narrow the selector) so it stops matching, or pin spec.amiSelectorTerms to an image id.',
                evidence,
              },
            ];
          }
        )
      );
    }),
});
