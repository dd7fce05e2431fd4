import { defineCheck } from '../check.js';
import type { Inventory } from '../inventory.js';
import { list } from './support/aws-facts.js';
import { forEachNodePool, lookUpNodeClass, type NodePoolTarget } from './support/nodepools.js';

const REF_PATH = 'spec.template.spec.nodeClassRef';

/** Where the scan looked for the class, for the message: the cluster, or the scanned files. */
function whereLooked(inventory: Inventory, target: NodePoolTarget): string {
  const classes = inventory.nodeClasses.filter((entry) => entry.cluster === target.entry.cluster);
  const names = [...new Set(classes.map((entry) => entry.name))].sort();
  const found =
    names.length === 0 ? 'none found' : `found: ${list(names.map((name) => `"${name}"`))}`;
  if (target.entry.cluster !== '') return `in cluster "${target.entry.cluster}" (${found})`;
  const files = new Set(
    [...inventory.nodeClasses, ...inventory.nodePools]
      .filter((entry) => entry.cluster === '')
      .flatMap((entry) => (entry.source ? [entry.source.file] : []))
  );
  return `in the ${files.size} file(s) scanned that hold NodeClasses or NodePools (${found})`;
}

/** The NodePool's nodeClassRef names an EC2NodeClass that exists where the NodePool lives. */
export const nodePoolNodeClassExists = defineCheck({
  id: 'nodepool-nodeclass-exists',
  title: 'NodePool references an existing EC2NodeClass',
  group: 'spec',
  severity: 'critical',
  inputs: ['spec'],
  scope: ['NodePool'],
  rationale:
    "Karpenter resolves a NodePool's nodeClassRef before it launches anything; when the EC2NodeClass does not exist it marks the NodePool NodeClassReady=False and launches nothing, so pods that only this NodePool could serve stay Pending.",
  remediation:
    'Create the EC2NodeClass the NodePool names in spec.template.spec.nodeClassRef (group karpenter.k8s.aws, kind EC2NodeClass), or point the reference at an existing one.',
  references: ['https://karpenter.sh/docs/concepts/nodepools/'],
  material: ['nodeClass'],
  evaluate: (inventory) =>
    forEachNodePool(inventory, (nodePool, target) => {
      const { resource } = target;
      const lookup = lookUpNodeClass(nodePool, target);
      switch (lookup.status) {
        case 'no-ref':
          return [
            {
              status: 'not-applicable',
              resource,
              message: 'No spec.template.spec.nodeClassRef (see nodepool-schema-valid).',
            },
          ];
        case 'other-kind':
          return [
            {
              status: 'not-applicable',
              resource,
              message: `nodeClassRef names a ${lookup.group || '(no group)'}/${lookup.kind || '(no kind)'}, not a karpenter.k8s.aws/EC2NodeClass; only EC2NodeClasses are checked.`,
              evidence: { group: lookup.group, kind: lookup.kind },
            },
          ];
        case 'missing':
          return [
            {
              status: 'fail',
              resource,
              message: `EC2NodeClass "${lookup.name}" does not exist ${whereLooked(inventory, target)}. Karpenter launches nothing for this NodePool (NodeClassReady=False).`,
              evidence: { nodeClass: lookup.name },
              location: { path: `${REF_PATH}.name` },
            },
          ];
        case 'found':
          return [
            {
              status: 'pass',
              resource,
              message: `EC2NodeClass "${lookup.name}" exists.`,
              evidence: { nodeClass: lookup.name },
            },
          ];
      }
    }),
});
