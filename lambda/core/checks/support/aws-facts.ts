// Shared plumbing of the AWS-backed (group B) checks: find a NodeClass's facts and turn a slice
// that could not be read into an `error` finding naming the reason.
import { type FindingDraft, type NodeClassTarget, readFaultOf } from '../../check.js';
import type {
  AmiFacts,
  AwsNodeClassFacts,
  ImageSelection,
  SecurityGroupFacts,
  SelectedImage,
  SubnetFacts,
} from '../../facts/aws.js';
import type { Slice } from '../../facts/slice.js';
import { factsKeyOf } from '../../inventory.js';
import type { ResourceRef } from '../../model.js';

/** How an `error` finding names each slice: what it holds and the call that reads it. */
export const SUBNETS = 'subnets (DescribeSubnets)';
export const SECURITY_GROUPS = 'security groups (DescribeSecurityGroups)';

export function awsFactsOf(target: NodeClassTarget): AwsNodeClassFacts {
  return target.inventory.awsFacts.get(factsKeyOf(target.entry)) ?? {};
}

/** `error` finding, a read fault, for facts that could not be read (or were never collected). */
export function unreadable(
  resource: ResourceRef,
  what: string,
  slice: Extract<Slice<unknown>, { status: 'unavailable' }> | undefined
): FindingDraft {
  if (slice === undefined) {
    return {
      status: 'error',
      resource,
      message: `Not evaluated: ${what} were not collected for this NodeClass.`,
      evidence: { reason: 'not-collected' },
      readFault: readFaultOf(what, undefined),
    };
  }
  return {
    status: 'error',
    resource,
    message: `Not evaluated: ${what} could not be read (${slice.reason}): ${slice.message}`,
    evidence: { reason: slice.reason, detail: slice.message },
    readFault: readFaultOf(what, slice),
  };
}

/** Runs `evaluate` on the slice's value, or returns the `error` finding when it is unavailable. */
export function withSlice<T>(
  resource: ResourceRef,
  what: string,
  slice: Slice<T> | undefined,
  evaluate: (value: T) => readonly FindingDraft[]
): readonly FindingDraft[] {
  if (slice === undefined || slice.status === 'unavailable') {
    return [unreadable(resource, what, slice)];
  }
  return evaluate(slice.value);
}

/** Runs `evaluate` on the NodeClass's matched subnets, or returns the `error` finding. */
export function withSubnets(
  target: NodeClassTarget,
  evaluate: (facts: SubnetFacts) => readonly FindingDraft[]
): readonly FindingDraft[] {
  return withSlice(target.resource, SUBNETS, awsFactsOf(target).subnets, evaluate);
}

/** Runs `evaluate` on the NodeClass's matched security groups, or returns the `error` finding. */
export function withSecurityGroups(
  target: NodeClassTarget,
  evaluate: (facts: SecurityGroupFacts) => readonly FindingDraft[]
): readonly FindingDraft[] {
  return withSlice(target.resource, SECURITY_GROUPS, awsFactsOf(target).securityGroups, evaluate);
}

export function list(items: readonly string[], max = 5): string {
  const shown = items.slice(0, max).join(', ');
  return items.length > max ? `${shown} and ${items.length - max} more` : shown;
}

/** Runs `evaluate` on Karpenter's selection (its `state=available` queries), or an `error`. */
export function withAvailableImages(
  target: NodeClassTarget,
  evaluate: (selection: ImageSelection, amis: AmiFacts) => readonly FindingDraft[]
): readonly FindingDraft[] {
  const { resource } = target;
  return withSlice(resource, 'AMI facts', awsFactsOf(target).amis, (amis) =>
    withSlice(resource, 'images (DescribeImages)', amis.available, (selection) =>
      evaluate(selection, amis)
    )
  );
}

/** Like `withAvailableImages`, `not-applicable` when nothing is selected (ami-selector-resolves fails). */
export function withSelectedImages(
  target: NodeClassTarget,
  evaluate: (selected: readonly SelectedImage[]) => readonly FindingDraft[]
): readonly FindingDraft[] {
  return withAvailableImages(target, (selection) =>
    selection.selected.length === 0
      ? [
          {
            status: 'not-applicable',
            resource: target.resource,
            message: 'No image is selected (see ami-selector-resolves).',
          },
        ]
      : evaluate(selection.selected)
  );
}
