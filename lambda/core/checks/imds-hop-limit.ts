import { effectiveAmiFamily } from '../ami-family.js';
import { defineCheck, forEachNodeClass } from '../check.js';
import { metadataEndpointDisabled } from './support/metadata.js';

/** Karpenter's (and the CRD's) default hop limit: the token cannot leave the host network namespace. */
const DEFAULT_HOP_LIMIT = 1;

/**
 * `metadataOptions.httpPutResponseHopLimit` stays at 1, so pods in their own network namespace
 * (one extra hop) cannot get an IMDSv2 token and the node role's credentials. Applies to every
 * AMI family; workloads that need AWS access should use Pod Identity or IRSA instead. Not
 * applicable when the metadata endpoint is disabled.
 */
export const imdsHopLimit = defineCheck({
  id: 'imds-hop-limit',
  title: 'IMDS hop limit keeps pods away from the node role (httpPutResponseHopLimit = 1)',
  group: 'spec',
  severity: 'low',
  inputs: ['spec'],
  rationale:
    "With a hop limit above 1, IMDSv2 tokens reach pods in their own network namespace, so every pod on the node can obtain the node role's credentials (EC2, ECR and VPC CNI permissions) instead of only the role its Pod Identity or IRSA grants.",
  remediation:
    'Set spec.metadataOptions.httpPutResponseHopLimit: 1 and give pods that need AWS access their own role (EKS Pod Identity or IRSA).',
  references: [
    'https://karpenter.sh/docs/concepts/nodeclasses/#specmetadataoptions',
    'https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/configuring-instance-metadata-options.html',
  ],
  material: ['httpPutResponseHopLimit'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, ({ spec }, { resource }) => {
      const disabled = metadataEndpointDisabled(spec, resource);
      if (disabled) return [disabled];
      const options = spec.metadataOptions;
      const hopLimit = options?.httpPutResponseHopLimit ?? DEFAULT_HOP_LIMIT;
      if (hopLimit <= DEFAULT_HOP_LIMIT) {
        return [{ status: 'pass', resource, message: `The IMDS hop limit is ${hopLimit}.` }];
      }
      const family = effectiveAmiFamily(spec) ?? 'unknown';
      return [
        {
          status: 'fail',
          resource,
          message: `metadataOptions.httpPutResponseHopLimit is ${hopLimit}: pods on ${family} nodes can obtain an IMDSv2 token and the node role's credentials.`,
          evidence: { httpPutResponseHopLimit: hopLimit, amiFamily: family },
          location: { path: 'spec.metadataOptions.httpPutResponseHopLimit' },
        },
      ];
    }),
});
