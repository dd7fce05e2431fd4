import { defineCheck, type FindingDraft, forEachNodeClass } from '../check.js';
import type { AmiSelectorTerm } from '../schema.js';
import { formatPath } from '../schema.js';

function isTagOnly(term: AmiSelectorTerm): boolean {
  return (
    term.tags !== undefined &&
    term.owner === undefined &&
    term.id === undefined &&
    term.alias === undefined &&
    term.name === undefined &&
    term.ssmParameter === undefined
  );
}

/**
 * No AMI selector term selects by tags alone. Karpenter sends no `Owners` for such a term (a `name`
 * term defaults to `self,amazon`), so any image shared with the account that carries the tags can
 * be selected — a supply-chain risk.
 */
export const amiOwnerExplicit = defineCheck({
  id: 'ami-owner-explicit',
  title: 'Tag-based AMI selector terms name an owner',
  group: 'spec',
  severity: 'medium',
  inputs: ['spec'],
  rationale:
    'For a term with only tags, Karpenter calls DescribeImages without an owner filter, so any image shared with the account that carries those tags can be selected. Anyone who can share an AMI with the account can then put their image on your nodes.',
  remediation:
    'Add owner to each tags-only amiSelectorTerm (your account ID or "self"), or select by id.',
  references: ['https://karpenter.sh/docs/concepts/nodeclasses/#specamiselectorterms'],
  material: ['tags'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, ({ spec }, { resource }) => {
      const drafts: FindingDraft[] = [];
      spec.amiSelectorTerms.forEach((term, index) => {
        if (!isTagOnly(term)) return;
        const path = formatPath(['spec', 'amiSelectorTerms', index]);
        drafts.push({
          status: 'fail',
          resource,
          message: `amiSelectorTerms[${index}] selects by tags only (${Object.keys(term.tags ?? {}).join(', ') || 'no keys'}) without owner: images shared from any account match.`,
          remediation: `Add owner to amiSelectorTerms[${index}] (e.g. owner: self, or your AMI account ID).`,
          evidence: { tags: term.tags },
          discriminator: path,
          location: { path },
        });
      });
      if (drafts.length > 0) return drafts;
      return [
        { status: 'pass', resource, message: 'No tags-only AMI selector term without an owner.' },
      ];
    }),
});
