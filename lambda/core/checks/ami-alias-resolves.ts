import { parseAlias } from '../ami/alias.js';
import { defineCheck, forEachNodeClass, readFaultOf } from '../check.js';
import type { AliasResolution } from '../facts/aws.js';
import { nodeClassSchemaValid } from './nodeclass-schema-valid.js';
import { awsFactsOf, list, withSlice } from './support/aws-facts.js';

/** What to change when Karpenter refuses the alias (or the CRD would reject it). */
export function refusedAliasRemediation(alias: AliasResolution): string {
  const family = parseAlias(alias.alias)?.family;
  if (family === 'al2') {
    return `AL2 aliases end at Kubernetes 1.32: move to alias al2023@latest (or bottlerocket@latest, or a pinned version of either), testing user data and bootstrap changes first.`;
  }
  if (family === 'windows2025') {
    return `Windows Server 2025 needs Kubernetes 1.35+: upgrade the cluster from ${alias.kubernetesVersion}, or use alias windows2022@latest.`;
  }
  return 'Use an alias of the form family@version with a supported family (al2023, al2, bottlerocket, windows2019, windows2022, windows2025).';
}

/**
 * The alias resolves through its SSM parameters for the cluster's Kubernetes version, and Karpenter
 * accepts it (AL2 ends at 1.33, Windows Server 2025 needs 1.35). Otherwise `AMIsReady` stays
 * Unknown with no reason (#7544, #8564).
 */
export const amiAliasResolves = defineCheck({
  id: 'ami-alias-resolves',
  title: "The AMI alias resolves for the cluster's Kubernetes version",
  group: 'aws',
  severity: 'critical',
  inputs: ['aws'],
  rationale:
    "Karpenter resolves an alias through AWS's public SSM parameters for the cluster's Kubernetes version. When none exists for that version, or Karpenter refuses the family on it (AL2 on newer, windows2025 on older Kubernetes), it finds no image, AMIsReady is not True and nothing launches.",
  remediation:
    "Use an alias version published for the cluster's Kubernetes version (or @latest); AL2 aliases end at Kubernetes 1.32 and windows2025 needs 1.35.",
  references: ['#7544', '#8564', '#8151', '#8842'],
  material: ['alias', 'kubernetesVersion', 'reason'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, ({ spec }, target) => {
      const { resource } = target;
      const aliasIndex = spec.amiSelectorTerms.findIndex((term) => term.alias);
      if (aliasIndex < 0) {
        return [{ status: 'not-applicable', resource, message: 'No alias term.' }];
      }
      const location = { path: `spec.amiSelectorTerms[${aliasIndex}].alias` };
      return withSlice(resource, 'AMI alias facts', awsFactsOf(target).amis, (amis) => {
        const alias = amis.alias;
        if (alias === undefined) {
          return [
            {
              status: 'error',
              resource,
              message: 'Not evaluated: the alias was not resolved by the AWS facts collector.',
              evidence: { reason: 'not-collected' },
              readFault: readFaultOf('the alias SSM parameters', undefined),
            },
          ];
        }
        // Alias parameters are AWS's public /aws/service/ ones: their values may be shown.
        const evidence = {
          alias: alias.alias,
          kubernetesVersion: alias.kubernetesVersion,
          parameters: alias.parameters.map((parameter) => ({
            name: parameter.name,
            result:
              parameter.value.status === 'unavailable'
                ? `unavailable (${parameter.value.reason})`
                : (parameter.value.value ?? 'not found'),
          })),
        };
        if (alias.unsupported) {
          const invalid = parseAlias(alias.alias) === undefined;
          return [
            {
              status: 'fail',
              resource,
              message: invalid
                ? `Alias ${alias.alias} is not a valid family@version alias (the API server rejects it; see nodeclass-schema-valid): ${alias.unsupported}.`
                : `Karpenter refuses alias ${alias.alias} on Kubernetes ${alias.kubernetesVersion} (AMIsReady=False, UnsupportedAlias): ${alias.unsupported}`,
              remediation: refusedAliasRemediation(alias),
              evidence,
              location,
              ...(invalid ? { causedBy: { checkId: nodeClassSchemaValid.id } } : {}),
            },
          ];
        }
        const found = alias.parameters.filter(
          (parameter) => parameter.value.status === 'ok' && parameter.value.value !== undefined
        );
        const unreadable = alias.parameters.filter(
          (parameter) => parameter.value.status === 'unavailable'
        );
        if (found.length > 0) {
          const note =
            unreadable.length > 0
              ? ` (${unreadable.length} parameter(s) could not be read by the scanner)`
              : '';
          return [
            {
              status: 'pass',
              resource,
              message: `Alias ${alias.alias} resolves through ${found.length} of ${alias.parameters.length} SSM parameters for Kubernetes ${alias.kubernetesVersion}${note}.`,
              evidence,
            },
          ];
        }
        if (unreadable.length > 0) {
          const first = unreadable[0]?.value;
          const reason = first?.status === 'unavailable' ? first.reason : 'unknown';
          return [
            {
              status: 'error',
              resource,
              message: `Not evaluated: SSM parameters for alias ${alias.alias} could not be read (${reason}): ${list(
                unreadable.map((parameter) => parameter.name),
                2
              )}.`,
              evidence: { ...evidence, reason },
              readFault: { reason, input: `SSM parameters for alias ${alias.alias}` },
            },
          ];
        }
        return [
          {
            status: 'fail',
            resource,
            message: `Alias ${alias.alias} resolves to nothing for Kubernetes ${alias.kubernetesVersion}: none of its ${alias.parameters.length} SSM parameters exist. Karpenter logs "failed to discover any AMIs for alias" and AMIsReady stays Unknown.`,
            remediation: `Use a ${alias.family} version published for Kubernetes ${alias.kubernetesVersion} (or @latest)${alias.parameters[0] ? `; check with: aws ssm get-parameter --name ${alias.parameters[0].name}` : ''}.`,
            evidence,
            location,
          },
        ];
      });
    }),
});
