// Shared by the IMDS checks: with the metadata endpoint disabled, their settings do not apply.
import type { FindingDraft } from '../../check.js';
import type { ResourceRef } from '../../model.js';
import type { EC2NodeClassSpec } from '../../schema.js';

/** `not-applicable` when `metadataOptions.httpEndpoint` is disabled, otherwise undefined. */
export function metadataEndpointDisabled(
  spec: EC2NodeClassSpec,
  resource: ResourceRef
): FindingDraft | undefined {
  if (spec.metadataOptions?.httpEndpoint !== 'disabled') return undefined;
  return {
    status: 'not-applicable',
    resource,
    message: 'The instance metadata endpoint is disabled.',
  };
}
