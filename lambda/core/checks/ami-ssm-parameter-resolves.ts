import type { FindingDraft } from '../check.js';
import { defineCheck, forEachNodeClass } from '../check.js';
import { ssmParameterPath } from '../iam/arns.js';
import { awsFactsOf, withSlice } from './support/aws-facts.js';

/** Karpenter's default controller policy allows `ssm:GetParameter` only under this prefix. */
const PUBLIC_PARAMETER_PREFIX = '/aws/service/';
const AMI_ID = /^ami-[0-9a-f]{8,17}$/;

/** Every custom `ssmParameter` term holds an `ami-` id (Karpenter silently skips the others). */
export const amiSsmParameterResolves = defineCheck({
  id: 'ami-ssm-parameter-resolves',
  title: 'Custom SSM parameter AMI terms resolve to an image id',
  group: 'aws',
  severity: 'high',
  inputs: ['aws'],
  remediation:
    "Create the SSM parameter with an ami-… value in the cluster's region, fix its name, and grant Karpenter's controller ssm:GetParameter on it when it is outside /aws/service/.",
  references: ['#7341', 'karpenter-validations §2.3, §4.1'],
  material: ['parameter', 'cause', 'reason'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, ({ spec }, target) => {
      const { resource } = target;
      const hasTerms = spec.amiSelectorTerms.some((term) => !term.id && term.ssmParameter);
      if (!hasTerms || spec.amiSelectorTerms.some((term) => term.alias)) {
        return [{ status: 'not-applicable', resource, message: 'No ssmParameter term.' }];
      }
      return withSlice(resource, 'AMI facts', awsFactsOf(target).amis, (amis) =>
        amis.ssmParameters.map((lookup): FindingDraft => {
          const path = `spec.amiSelectorTerms[${lookup.termIndex}].ssmParameter`;
          const base = { resource, discriminator: path, location: { path } };
          if (lookup.value.status === 'unavailable') {
            return {
              ...base,
              status: 'error',
              message: `Not evaluated: SSM parameter ${lookup.name} could not be read (${lookup.value.reason}): ${lookup.value.message}`,
              evidence: { parameter: lookup.name, reason: lookup.value.reason },
            };
          }
          const value = lookup.value.value;
          if (value === undefined) {
            return {
              ...base,
              status: 'fail',
              message: `SSM parameter ${lookup.name} does not exist: Karpenter skips the term silently (AMINotFound if nothing else matches).`,
              evidence: { parameter: lookup.name, cause: 'not-found' },
            };
          }
          if (!value.startsWith('ami-')) {
            return {
              ...base,
              status: 'fail',
              // Not echoed: any parameter the scanner can read may be named, secrets included.
              message: `SSM parameter ${lookup.name} holds a value that is not an ami- id (${value.length} characters, not shown): Karpenter skips the term silently.`,
              evidence: {
                parameter: lookup.name,
                cause: 'not-an-image-id',
                valueLength: value.length,
              },
            };
          }
          // Only a well-formed image id is echoed; anything else could be someone's secret.
          const shown = AMI_ID.test(value)
            ? value
            : `an ami- value (${value.length} characters, not shown)`;
          const outside = !ssmParameterPath(lookup.name).startsWith(PUBLIC_PARAMETER_PREFIX);
          return {
            ...base,
            status: 'pass',
            message: outside
              ? `SSM parameter ${lookup.name} holds ${shown}. It is outside ${PUBLIC_PARAMETER_PREFIX}: Karpenter's controller needs its own ssm:GetParameter grant for it (see controller-can-discover).`
              : `SSM parameter ${lookup.name} holds ${shown}.`,
            evidence: {
              parameter: lookup.name,
              ...(AMI_ID.test(value) ? { value } : { valueLength: value.length }),
              needsExtraPermission: outside,
            },
          };
        })
      );
    }),
});
