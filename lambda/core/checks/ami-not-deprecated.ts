import { defineCheck, forEachNodeClass } from '../check.js';
import { withSelectedImages } from './support/aws-facts.js';

const DEPRECATION_WARNING_DAYS = 30;
const DAY_MS = 86_400_000;

/** Selected images are not deprecated and not about to be. */
export const amiNotDeprecated = defineCheck({
  id: 'ami-not-deprecated',
  title: 'Selected images are not deprecated',
  group: 'aws',
  severity: 'medium',
  inputs: ['aws'],
  rationale:
    'A deprecated image gets no further fixes and is on its way to being disabled or deregistered. Karpenter falls back to it only while nothing newer matches; once it is gone, a class that selects only it resolves no image and scale-ups stop.',
  remediation:
    'Move spec.amiSelectorTerms to a current image (or extend the image deprecation time); Karpenter keeps a deprecated image only when nothing newer matches.',
  references: [
    '#6393',
    '#6500',
    'https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ami-deprecate.html',
  ],
  material: ['images[].id', 'images[].deprecated', 'reason'],
  evaluate: (inventory, { now }) =>
    forEachNodeClass(inventory, (_nodeClass, target) => {
      const { resource } = target;
      return withSelectedImages(target, (selected) => {
        const horizon = now.getTime() + DEPRECATION_WARNING_DAYS * DAY_MS;
        const flagged = selected.flatMap((item) => {
          const time = item.image.deprecationTime
            ? Date.parse(item.image.deprecationTime)
            : Number.NaN;
          if (Number.isNaN(time) || time > horizon) return [];
          const past = time <= now.getTime();
          return [
            {
              id: item.image.id,
              name: item.image.name,
              deprecationTime: item.image.deprecationTime,
              // Becoming deprecated is a change; the days left are not.
              deprecated: past,
              text: `${item.image.id} (${item.image.name ?? 'unnamed'}) ${past ? 'was deprecated' : 'will be deprecated'} on ${item.image.deprecationTime}`,
            },
          ];
        });
        if (flagged.length === 0) {
          return [
            {
              status: 'pass',
              resource,
              message: `No selected image is deprecated within ${DEPRECATION_WARNING_DAYS} days.`,
            },
          ];
        }
        return [
          {
            status: 'fail',
            resource,
            message: `Selected image ${flagged.map((item) => item.text).join('; ')}.`,
            evidence: { images: flagged.map(({ text: _text, ...image }) => image) },
          },
        ];
      });
    }),
});
