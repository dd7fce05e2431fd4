import { defineCheck, forEachNodeClass } from '../check.js';
import { list, withSelectedImages } from './support/aws-facts.js';

/** No selected image is refused by the account's "Allowed AMIs" setting (`ImageAllowed=false`). */
export const amiAllowed = defineCheck({
  id: 'ami-allowed',
  title: "Selected images are allowed by the account's Allowed AMIs setting",
  group: 'aws',
  severity: 'high',
  inputs: ['aws'],
  rationale:
    "Images outside the account's Allowed AMIs criteria report ImageAllowed=false. Once the setting is enabled (not only in audit mode), EC2 refuses to launch them, so every Karpenter launch with such an image fails, with an error that is not an IAM denial.",
  remediation:
    "Add the image owner or name to the account's Allowed AMIs criteria (EC2 → Allowed AMIs), or select an allowed image.",
  references: ['https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-allowed-amis.html'],
  material: ['images[].id', 'reason'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, (_nodeClass, target) => {
      const { resource } = target;
      return withSelectedImages(target, (selected) => {
        const refused = selected.filter((item) => item.image.imageAllowed === false);
        if (refused.length === 0) {
          return [
            {
              status: 'pass',
              resource,
              message: 'No selected image is refused by Allowed AMIs.',
            },
          ];
        }
        return [
          {
            status: 'fail',
            resource,
            message: `Selected image ${list(refused.map((item) => item.image.id))} has ImageAllowed=false: EC2 refuses the launch (not an IAM error).`,
            evidence: {
              images: refused.map((item) => ({
                id: item.image.id,
                name: item.image.name,
                ownerId: item.image.ownerId,
              })),
            },
          },
        ];
      });
    }),
});
