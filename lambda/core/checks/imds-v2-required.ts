import { defineCheck, forEachNodeClass } from '../check.js';
import { metadataEndpointDisabled } from './support/metadata.js';

/**
 * IMDSv2 is required (`metadataOptions.httpTokens` is not `optional`; the CRD default is
 * `required`). Not applicable when the metadata endpoint is disabled.
 */
export const imdsV2Required = defineCheck({
  id: 'imds-v2-required',
  title: 'IMDSv2 is required (httpTokens is not optional)',
  group: 'spec',
  severity: 'medium',
  inputs: ['spec'],
  rationale:
    'With httpTokens: optional the instance metadata service answers IMDSv1 requests, which need no token, so any process on the node or an SSRF flaw in a pod can read the node role credentials. Organizations that enforce ec2:MetadataHttpTokens=required with an SCP also deny every launch of such a class.',
  remediation:
    'Set spec.metadataOptions.httpTokens: required (or remove it; the default is required).',
  references: [
    '#9018',
    'https://karpenter.sh/docs/concepts/nodeclasses/#specmetadataoptions',
    'https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/configuring-instance-metadata-options.html',
  ],
  material: ['httpTokens'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, ({ spec }, { resource }) => {
      const disabled = metadataEndpointDisabled(spec, resource);
      if (disabled) return [disabled];
      const options = spec.metadataOptions;
      const httpTokens = options?.httpTokens ?? 'required';
      if (httpTokens !== 'optional') {
        return [
          {
            status: 'pass',
            resource,
            message: `IMDSv2 is required (httpTokens: ${httpTokens}${options?.httpTokens === undefined ? ', the default' : ''}).`,
          },
        ];
      }
      return [
        {
          status: 'fail',
          resource,
          message:
            'metadataOptions.httpTokens is optional: IMDSv1 is allowed, so any process (or SSRF) on the node can read the node role credentials without a token; SCPs requiring ec2:MetadataHttpTokens=required also deny the launch.',
          evidence: { httpTokens },
          location: { path: 'spec.metadataOptions.httpTokens' },
        },
      ];
    }),
});
