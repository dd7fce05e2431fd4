import {
  isPublicParameter,
  PUBLIC_PARAMETER_PREFIX,
  shownParameterValue,
  visibleImageIds,
} from '../ami/ssm-scope.js';
import type { FindingDraft } from '../check.js';
import { defineCheck, forEachNodeClass, readFaultOf } from '../check.js';
import { awsFactsOf, withSlice } from './support/aws-facts.js';

/**
 * Every custom `ssmParameter` term holds the id of an image the account can see (Karpenter
 * silently skips the others). A parameter may hold anything, secrets included: its value is shown
 * only when it is the id of an image DescribeImages lists for the account (or, for AWS's public
 * parameters, an image id), and neither its length nor its form is ever reported otherwise.
 */
export const amiSsmParameterResolves = defineCheck({
  id: 'ami-ssm-parameter-resolves',
  title: 'Custom SSM parameter AMI terms resolve to an image the account can see',
  group: 'aws',
  severity: 'high',
  inputs: ['aws'],
  rationale:
    "Karpenter reads an ssmParameter term's value as an image id and silently skips the term when the parameter is missing or names an image the account cannot see. If no other term matches, AMIsReady=False (AMINotFound) and nothing launches.",
  remediation:
    "Create the SSM parameter in the cluster's region holding the id of an image this account can see (its own or one shared with it), fix its name, and grant Karpenter's controller ssm:GetParameter on it when it is outside /aws/service/.",
  references: [
    '#7341',
    'https://karpenter.sh/docs/concepts/nodeclasses/#specamiselectorterms',
    'https://karpenter.sh/docs/reference/cloudformation/',
  ],
  material: ['parameter', 'cause', 'reason'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, ({ spec }, target) => {
      const { resource } = target;
      const hasTerms = spec.amiSelectorTerms.some((term) => !term.id && term.ssmParameter);
      if (!hasTerms || spec.amiSelectorTerms.some((term) => term.alias)) {
        return [{ status: 'not-applicable', resource, message: 'No ssmParameter term.' }];
      }
      return withSlice(resource, 'AMI facts', awsFactsOf(target).amis, (amis) => {
        const visible = visibleImageIds(amis);
        return amis.ssmParameters.map((lookup): FindingDraft => {
          const path = `spec.amiSelectorTerms[${lookup.termIndex}].ssmParameter`;
          const base = { resource, discriminator: path, location: { path } };
          const parameter = lookup.name;
          if (lookup.value.status === 'unavailable') {
            return {
              ...base,
              status: 'error',
              message: `Not evaluated: SSM parameter ${parameter} could not be read (${lookup.value.reason}): ${lookup.value.message}`,
              evidence: { parameter, reason: lookup.value.reason },
              readFault: readFaultOf(`SSM parameter ${parameter}`, lookup.value),
            };
          }
          const value = lookup.value.value;
          if (value === undefined) {
            return {
              ...base,
              status: 'fail',
              message: `SSM parameter ${parameter} does not exist: Karpenter skips the term silently (AMINotFound if nothing else matches).`,
              evidence: { parameter, cause: 'not-found' },
            };
          }
          const shown = shownParameterValue(parameter, value, visible);
          if (visible === undefined) {
            // Unknown whether the value names a visible image: only a public id may be shown.
            const images = amis.available;
            const reason = images.status === 'unavailable' ? images.reason : 'unknown';
            return {
              ...base,
              status: 'error',
              message: `Not evaluated: SSM parameter ${parameter} exists, but whether it names an image this account can see is unknown: images could not be read with DescribeImages (${reason}).`,
              evidence: {
                parameter,
                reason,
                ...(shown === undefined ? {} : { value: shown }),
              },
              readFault: readFaultOf(
                'images (DescribeImages)',
                images.status === 'unavailable' ? images : { reason: 'unknown' }
              ),
            };
          }
          const outside = !isPublicParameter(parameter);
          if (shown === undefined || !visible.has(value)) {
            return {
              ...base,
              status: 'fail',
              message:
                shown === undefined
                  ? `SSM parameter ${parameter} does not hold the id of an image this account can see in the cluster's region (its value is not shown): Karpenter selects nothing through this term.`
                  : `SSM parameter ${parameter} holds ${shown}, an image this account cannot see in the cluster's region: Karpenter selects nothing through this term.`,
              evidence: {
                parameter,
                cause: 'no-visible-image',
                ...(shown === undefined ? {} : { value: shown }),
              },
            };
          }
          return {
            ...base,
            status: 'pass',
            message: outside
              ? `SSM parameter ${parameter} holds ${shown}, an image this account can see. It is outside ${PUBLIC_PARAMETER_PREFIX}: Karpenter's controller needs its own ssm:GetParameter grant for it (see controller-can-discover).`
              : `SSM parameter ${parameter} holds ${shown}, an image this account can see.`,
            evidence: { parameter, imageId: shown, needsExtraPermission: outside },
          };
        });
      });
    }),
});
