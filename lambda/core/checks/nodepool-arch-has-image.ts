import { defineCheck } from '../check.js';
import type { ImageArchitecture } from '../facts/aws.js';
import { launchabilityEvaluable } from '../launchability.js';
import { labelAdmits, labelValueSet, nodePoolRequirements } from '../nodepool-requirements.js';
import { withSlice } from './support/aws-facts.js';
import {
  ARCH_LABEL,
  forEachNodePool,
  requirementPath,
  withNodeClass,
} from './support/nodepools.js';

/** Karpenter's node architectures and the EC2 image architecture each one boots. */
const ARCHITECTURES: readonly { readonly label: string; readonly image: ImageArchitecture }[] = [
  { label: 'amd64', image: 'x86_64' },
  { label: 'arm64', image: 'arm64' },
];

/** Some architecture the NodePool allows has an image its EC2NodeClass resolves. */
export const nodePoolArchHasImage = defineCheck({
  id: 'nodepool-arch-has-image',
  title: 'NodePool architectures have an image in the EC2NodeClass',
  group: 'aws',
  severity: 'critical',
  inputs: ['aws'],
  scope: ['NodePool'],
  rationale:
    "Karpenter launches an instance type only with an image of that type's architecture. If some of the architectures the NodePool allows have no image in its EC2NodeClass, pods that need them stay Pending. When none has one the NodePool launches nothing: nodepool-instance-types-offered reports that whenever the region's instance types were read, and this check only when they were not.",
  remediation:
    "Allow in the NodePool's kubernetes.io/arch requirement an architecture the EC2NodeClass has images for, or select images of the missing architecture in the class's amiSelectorTerms.",
  references: [
    'https://karpenter.sh/docs/concepts/scheduling/#well-known-labels',
    'https://karpenter.sh/docs/concepts/nodeclasses/#specamiselectorterms',
  ],
  material: ['uncovered', 'imageArchitectures'],
  evaluate: (inventory) =>
    forEachNodePool(inventory, (nodePool, target) => {
      const { resource } = target;
      return withNodeClass(nodePool, target, (nodeClass) =>
        withSlice(resource, 'AMI facts', nodeClass.facts.amis, (amis) =>
          withSlice(resource, 'images (DescribeImages)', amis.available, (selection) => {
            if (selection.selected.length === 0) {
              return [
                {
                  status: 'not-applicable',
                  resource,
                  message: `EC2NodeClass "${nodeClass.entry.name}" resolves no image (see ami-selector-resolves).`,
                  causedBy: { checkId: 'ami-selector-resolves', resource: nodeClass.resource },
                },
              ];
            }
            const requirements = nodePoolRequirements(nodePool);
            const { constrained } = labelValueSet(requirements, ARCH_LABEL);
            const allowed = ARCHITECTURES.filter((arch) =>
              labelAdmits(requirements, ARCH_LABEL, arch.label)
            );
            const imageArchitectures = [
              ...new Set(selection.selected.map((selected) => selected.architecture)),
            ].sort();
            const covered = allowed.filter((arch) => imageArchitectures.includes(arch.image));
            const uncovered = allowed.filter((arch) => !imageArchitectures.includes(arch.image));
            const allowedText = allowed.length
              ? allowed.map((arch) => arch.label).join(', ')
              : 'no architecture';
            const sides = `The NodePool allows ${allowedText}${constrained ? '' : ' (no kubernetes.io/arch requirement: both)'}; EC2NodeClass "${nodeClass.entry.name}" resolves ${imageArchitectures.join(', ')} images.`;
            const path = requirementPath(nodePool, ARCH_LABEL);
            const evidence = {
              allowed: allowed.map((arch) => arch.label),
              imageArchitectures,
              uncovered: uncovered.map((arch) => arch.label),
            };
            if (covered.length === 0 && launchabilityEvaluable(nodeClass.facts)) {
              // The NodePool launches nothing: nodepool-instance-types-offered names this step.
              return [
                {
                  status: 'not-applicable',
                  resource,
                  message: `${sides} No allowed architecture has an image: reported by nodepool-instance-types-offered.`,
                  evidence,
                },
              ];
            }
            if (covered.length === 0) {
              return [
                {
                  status: 'fail',
                  resource,
                  message: `${sides} No allowed architecture has an image: Karpenter launches nothing for this NodePool.`,
                  evidence,
                  ...(path ? { location: { path } } : {}),
                },
              ];
            }
            if (uncovered.length > 0) {
              return [
                {
                  status: 'fail',
                  severity: 'low',
                  resource,
                  message: `${sides} ${uncovered.map((arch) => arch.label).join(', ')} has no image: pods that need it stay pending.`,
                  evidence,
                  ...(path ? { location: { path } } : {}),
                },
              ];
            }
            return [{ status: 'pass', resource, message: sides, evidence }];
          })
        )
      );
    }),
});
