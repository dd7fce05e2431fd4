// CloudTrail IAM call → the roles it changed (a policy ARN → the roles it is attached to; a role →
// the instance profiles holding it) → the stored NodeClasses whose node role, instance profile or
// controller role is affected → a scan restricted to those NodeClasses.
import { affectedByIam } from '../core/event-index.js';
import { parseIamChange } from '../core/events.js';
import type { IamEntityReader } from '../core/ports/service.js';
import {
  type EventDeps,
  type EventOutcome,
  ignoreEvent,
  refOf,
  rescan,
} from './handle-ami-event.js';

export interface IamEventDeps extends EventDeps {
  readonly iam: IamEntityReader;
}

export async function handleIamEvent(deps: IamEventDeps, raw: unknown): Promise<EventOutcome> {
  const parsed = parseIamChange(raw);
  if (!parsed.ok) return ignoreEvent(deps, parsed.reason, parsed.detail);
  const change = parsed.value;
  const policyRoles = (
    await Promise.all(change.policyArns.map((arn) => deps.iam.rolesAttachedToPolicy(arn)))
  ).flat();
  const roleNames = [...new Set([...change.roleNames, ...policyRoles])];
  const profilesOfRoles = (
    await Promise.all(roleNames.map((role) => deps.iam.instanceProfilesForRole(role)))
  ).flat();
  const instanceProfileNames = [...new Set([...change.instanceProfileNames, ...profilesOfRoles])];
  const index = await deps.store.loadIndex();
  const affected = affectedByIam(index, { roleNames, instanceProfileNames }).map(refOf);
  deps.logger.info('IAM change', {
    eventName: change.eventName,
    roles: roleNames,
    instanceProfiles: instanceProfileNames,
    indexed: index.length,
    affected: affected.length,
  });
  return rescan(deps, `iam-${change.eventId}`, `iam-${change.eventName}`, affected);
}
