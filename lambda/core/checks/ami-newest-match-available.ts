import { defineCheck, forEachNodeClass } from '../check.js';
import { isAtLeast } from '../version.js';
import { awsFactsOf, list, withSlice } from './support/aws-facts.js';

/** Karpenter added the `state=available` filter in v1.2.2 (cherry-pick #7685) and v1.3.0 (#7672). */
const FIXED_IN = '1.2.2';

/**
 * Ignoring state, the image Karpenter's ordering puts first is `available`. Older Karpenter
 * versions select a newer `pending` image (Packer builds) and every launch fails (#7652).
 */
export const amiNewestMatchAvailable = defineCheck({
  id: 'ami-newest-match-available',
  title: 'The newest image matching the AMI selector is available',
  group: 'aws',
  severity: 'high',
  inputs: ['aws'],
  remediation:
    'Upgrade Karpenter to v1.2.2+ (or v1.3.0+), or pin spec.amiSelectorTerms to an available image id until the newer image is available or removed.',
  references: ['#7652', '#7672', '#7685'],
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
            const version = cluster.karpenterVersion;
            const affected = version === undefined || !isAtLeast(version, FIXED_IN);
            const images = notAvailable.map(
              (item) =>
                `${item.image.id} (${item.image.name ?? 'unnamed'}, ${item.image.state}, ${item.architecture})`
            );
            const versionText =
              version === undefined ? 'an unknown version' : `v${version.raw.replace(/^v/, '')}`;
            return [
              {
                status: 'fail',
                resource,
                severity: affected ? 'critical' : 'info',
                message: affected
                  ? `Karpenter (${versionText}, < v${FIXED_IN}) selects ${list(images)}, which is not available: launches fail until it is.`
                  : `Newest matching image ${list(images)} is not available yet; once it is, Karpenter selects it and rolls every node.`,
                evidence: {
                  images: notAvailable.map((item) => ({
                    id: item.image.id,
                    name: item.image.name,
                    state: item.image.state,
                    architecture: item.architecture,
                    creationDate: item.image.creationDate,
                  })),
                  karpenterVersion: version?.raw ?? 'unknown',
                  affectedVersion: affected,
                },
              },
            ];
          }
        )
      );
    }),
});
