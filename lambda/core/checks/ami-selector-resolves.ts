import { parseAlias } from '../ami/alias.js';
import { defineCheck, forEachNodeClass } from '../check.js';
import { refusedAliasRemediation } from './ami-alias-resolves.js';
import { list, withAvailableImages } from './support/aws-facts.js';

/** At least one `available` image matches the amiSelectorTerms (Karpenter's exact queries). */
export const amiSelectorResolves = defineCheck({
  id: 'ami-selector-resolves',
  title: 'AMI selector terms resolve to an available image',
  group: 'aws',
  severity: 'critical',
  inputs: ['aws'],
  remediation:
    'Fix spec.amiSelectorTerms so they match an available image this account can see (name, tags, owner or id), or publish the image.',
  references: ['karpenter-validations §2.3'],
  material: [],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, (_nodeClass, target) => {
      const { resource } = target;
      return withAvailableImages(target, (selection, amis) => {
        if (selection.selected.length > 0) {
          const ids = selection.selected.map((item) => `${item.image.id} (${item.architecture})`);
          return [
            {
              status: 'pass',
              resource,
              message: `Karpenter selects ${list(ids)}.`,
              evidence: { selected: selection.selected.map((item) => item.image.id) },
            },
          ];
        }
        const alias = amis.alias;
        if (alias?.unsupported) {
          return [
            {
              status: 'fail',
              resource,
              message:
                parseAlias(alias.alias) === undefined
                  ? `No image: ${alias.alias} is not a valid alias (see nodeclass-schema-valid).`
                  : `No image: Karpenter refuses alias ${alias.alias} (UnsupportedAlias): ${alias.unsupported}`,
              remediation: refusedAliasRemediation(alias),
              evidence: { alias: alias.alias, kubernetesVersion: alias.kubernetesVersion },
              location: { path: 'spec.amiSelectorTerms' },
            },
          ];
        }
        const unreadableSsm = [...(alias?.parameters ?? []), ...amis.ssmParameters].filter(
          (lookup) => lookup.value.status === 'unavailable'
        );
        // A parameter the scanner could not read may hold the image the other terms lack.
        if (unreadableSsm.length > 0) {
          const reasons = unreadableSsm.map((lookup) =>
            lookup.value.status === 'unavailable'
              ? `${lookup.name} (${lookup.value.reason})`
              : lookup.name
          );
          return [
            {
              status: 'error',
              resource,
              message: `Not evaluated: no image matched the readable terms, and SSM parameters could not be read: ${list(reasons)}.`,
              evidence: { parameters: unreadableSsm.map((lookup) => lookup.name) },
            },
          ];
        }
        const why =
          selection.queries.length === 0
            ? 'no AMI id was resolved from the alias or SSM parameters (see ami-alias-resolves / ami-ssm-parameter-resolves)'
            : selection.matchCount > 0
              ? `${selection.matchCount} image(s) match but none is x86_64 or arm64`
              : 'no available image matches (Karpenter: AMIsReady=False, AMINotFound)';
        return [
          {
            status: 'fail',
            resource,
            message: `amiSelectorTerms resolve to no image: ${why}.`,
            evidence: {
              queries: selection.queries.map((result) => result.query),
              matchCount: selection.matchCount,
            },
            location: { path: 'spec.amiSelectorTerms' },
          },
        ];
      });
    }),
});
