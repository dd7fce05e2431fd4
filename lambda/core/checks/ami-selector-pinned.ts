import { splitAlias } from '../ami-family.js';
import { defineCheck, type FindingDraft, forEachNodeClass } from '../check.js';
import { formatPath } from '../schema.js';

const WILDCARD = /[*?]/;

/**
 * Every AMI selector term pins one image: no `@latest` alias and no `name` with wildcards. An
 * unpinned term drifts every node whenever a newer matching image appears. Severity is `info` when
 * the scan is marked non-production (`@latest` is fine for a test cluster).
 */
export const amiSelectorPinned = defineCheck({
  id: 'ami-selector-pinned',
  title: 'AMI selector pins a version (no @latest alias, no wildcard name)',
  group: 'spec',
  severity: 'low',
  inputs: ['spec'],
  rationale:
    "Karpenter treats a change of the resolved image as drift: with an @latest alias or a wildcard name, each new image release replaces every node of the class on the publisher's schedule rather than yours, and untested images reach production. Before v1.2.2 a wildcard can even pick a build that is still pending.",
  remediation:
    'Pin the AMI: use a versioned alias (e.g. al2023@v20251001) or an id term, and roll versions deliberately.',
  references: [
    'https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/amifamily/ami.go',
    'https://karpenter.sh/docs/concepts/nodeclasses/#specamiselectorterms',
  ],
  material: ['alias', 'name'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, ({ spec }, { resource }) => {
      const severity = inventory.environment === 'non-production' ? 'info' : undefined;
      const drafts: FindingDraft[] = [];
      spec.amiSelectorTerms.forEach((term, index) => {
        const base = ['spec', 'amiSelectorTerms', index] as const;
        if (term.alias !== undefined && splitAlias(term.alias).version === 'latest') {
          const { family } = splitAlias(term.alias);
          const path = formatPath([...base, 'alias']);
          drafts.push({
            status: 'fail',
            resource,
            ...(severity ? { severity } : {}),
            message: `amiSelectorTerms[${index}] uses alias ${term.alias}: every new ${family} release drifts (replaces) all nodes; not recommended for production.`,
            ...(family.startsWith('windows')
              ? {
                  remediation:
                    'Windows aliases only support @latest: pin the image with an id term instead.',
                }
              : {}),
            evidence: { alias: term.alias },
            discriminator: path,
            location: { path },
          });
        } else if (term.name !== undefined && WILDCARD.test(term.name)) {
          const path = formatPath([...base, 'name']);
          drafts.push({
            status: 'fail',
            resource,
            ...(severity ? { severity } : {}),
            message: `amiSelectorTerms[${index}] selects name "${term.name}" with wildcards: the newest matching image wins, so every new build drifts all nodes (and a still-pending build may be picked on Karpenter < v1.2.2).`,
            evidence: { name: term.name },
            discriminator: path,
            location: { path },
          });
        }
      });
      if (drafts.length > 0) return drafts;
      return [
        {
          status: 'pass',
          resource,
          message: 'No @latest alias or wildcard name in amiSelectorTerms.',
        },
      ];
    }),
});
