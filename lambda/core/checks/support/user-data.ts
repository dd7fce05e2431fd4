// What both userData checks settle first: the AMI family to read spec.userData for, or why it
// cannot be read (no family, or a snapshot that redacted it).
import { type AmiFamily, effectiveAmiFamily } from '../../ami-family.js';
import type { FindingDraft } from '../../check.js';
import type { EC2NodeClassSpec } from '../../schema.js';
import { REDACTED_USER_DATA } from '../../user-data/analyze.js';

/** The family, or the not-applicable finding; `what` completes "No AMI family to …" and "…, so …". */
export function userDataFamily(
  spec: EC2NodeClassSpec,
  resource: FindingDraft['resource'],
  what: { readonly noFamily: string; readonly redacted: string }
): AmiFamily | FindingDraft {
  const family = effectiveAmiFamily(spec);
  if (family === undefined) {
    return {
      status: 'not-applicable',
      resource,
      message: `No AMI family to ${what.noFamily} (no valid amiFamily or alias; see nodeclass-schema-valid).`,
      causedBy: { checkId: 'nodeclass-schema-valid' },
    };
  }
  if (spec.userData === REDACTED_USER_DATA) {
    return {
      status: 'not-applicable',
      resource,
      message: `spec.userData was redacted in the snapshot this scan reads, so ${what.redacted} (scan the manifests or the live cluster to check it).`,
    };
  }
  return family;
}
