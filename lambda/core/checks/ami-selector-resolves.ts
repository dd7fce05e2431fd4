import { parseAlias } from '../ami/alias.js';
import { visibleImageIds, withHiddenParameterValues } from '../ami/ssm-scope.js';
import { defineCheck, forEachNodeClass } from '../check.js';
import { amiAliasResolves, refusedAliasRemediation } from './ami-alias-resolves.js';
import { amiSsmParameterResolves } from './ami-ssm-parameter-resolves.js';
import { list, withAvailableImages } from './support/aws-facts.js';

/** At least one `available` image matches the amiSelectorTerms (Karpenter's exact queries). */
export const amiSelectorResolves = defineCheck({
  id: 'ami-selector-resolves',
  title: 'AMI selector terms resolve to an available image',
  group: 'aws',
  severity: 'critical',
  inputs: ['aws'],
  rationale:
    'Karpenter launches only images its amiSelectorTerms queries return as available; when none match it sets AMIsReady=False (AMINotFound), the EC2NodeClass is not Ready and no node launches from it.',
  remediation:
    'Fix spec.amiSelectorTerms so they match an available image this account can see (name, tags, owner or id), or publish the image.',
  references: [
    'https://karpenter.sh/docs/concepts/nodeclasses/#specamiselectorterms',
    'https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/amifamily/ami.go',
  ],
  material: ['cause', 'queries', 'alias', 'parameters', 'reason'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, ({ spec }, target) => {
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
              evidence: {
                cause: 'unsupported-alias',
                alias: alias.alias,
                kubernetesVersion: alias.kubernetesVersion,
              },
              location: { path: 'spec.amiSelectorTerms' },
              causedBy: { checkId: amiAliasResolves.id },
            },
          ];
        }
        const unreadableSsm = [...(alias?.parameters ?? []), ...amis.ssmParameters].filter(
          (lookup) => lookup.value.status === 'unavailable'
        );
        // A parameter the scanner could not read may hold the image the other terms lack.
        if (unreadableSsm.length > 0) {
          const aliasUnreadable = (alias?.parameters ?? []).some(
            (lookup) => lookup.value.status === 'unavailable'
          );
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
              evidence: {
                cause: 'ssm-unreadable',
                parameters: unreadableSsm.map((lookup) => lookup.name),
              },
              causedBy: {
                checkId: aliasUnreadable ? amiAliasResolves.id : amiSsmParameterResolves.id,
              },
              readFault: {
                reason:
                  unreadableSsm[0]?.value.status === 'unavailable'
                    ? unreadableSsm[0].value.reason
                    : 'unknown',
                input: 'SSM parameters (ssm:GetParameter)',
              },
            },
          ];
        }
        const noImageId = selection.queries.length === 0;
        // Only custom parameter terms, none naming a visible image: that check names each term.
        const onlyParameters = spec.amiSelectorTerms.every(
          (term) => !term.alias && !term.id && term.ssmParameter !== undefined
        );
        const cause = noImageId
          ? 'no-image-id'
          : selection.matchCount > 0
            ? 'no-supported-architecture'
            : 'no-match';
        const why = {
          'no-image-id':
            'no AMI id was resolved from the alias or SSM parameters (see ami-alias-resolves / ami-ssm-parameter-resolves)',
          'no-supported-architecture': `${selection.matchCount} image(s) match but none is x86_64 or arm64`,
          'no-match': 'no available image matches (Karpenter: AMIsReady=False, AMINotFound)',
        }[cause];
        return [
          {
            status: 'fail',
            resource,
            message: `amiSelectorTerms resolve to no image: ${why}.`,
            evidence: {
              cause,
              // A parameter's value is not shown unless it is an image the account can see.
              queries: withHiddenParameterValues(
                selection.queries.map((result) => result.query),
                amis.ssmParameters,
                visibleImageIds(amis),
                new Set(spec.amiSelectorTerms.flatMap((term) => (term.id ? [term.id] : [])))
              ),
              matchCount: selection.matchCount,
            },
            location: { path: 'spec.amiSelectorTerms' },
            // The alias or SSM parameter check names which term resolved to nothing.
            ...(noImageId || (onlyParameters && cause === 'no-match')
              ? {
                  causedBy: {
                    checkId: alias === undefined ? amiSsmParameterResolves.id : amiAliasResolves.id,
                  },
                }
              : {}),
          },
        ];
      });
    }),
});
