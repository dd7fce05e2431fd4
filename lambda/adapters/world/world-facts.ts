// AwsFactsPort over a world file: the recorded lists, filtered with the same EC2 filter semantics
// the live API applies (core's matcher, not a second copy), so a snapshot replays the live scan.

import type { InstanceProfile, InstanceTypeOffering, Role } from '../../core/facts/aws.js';
import type { AwsFactsPort } from '../../core/ports/aws-facts.js';
import { UnsupportedFilterError } from '../../core/selectors/ec2-filter.js';
import { SourceUnavailableError } from '../../shared/errors.js';
import { ec2ListMethods } from '../aws/fact-descriptors.js';
import { instanceProfileFromSdk, roleFromSdk } from '../aws/sdk-shapes.js';
import type { World } from './schema.js';

export interface WorldFactsOptions {
  readonly world: World;
  /** Deprecation is relative to the scan's clock (only matters when IncludeDeprecated is false). */
  readonly now: Date;
}

/**
 * Names an SSM name-or-ARN can stand for. `…:parameter/a/b` is `/a/b`; `…:parameter/a` is `/a` or
 * `a` (the ARN of a name without a leading slash gains one).
 */
export function parameterNamesOf(nameOrArn: string): string[] {
  if (!nameOrArn.startsWith('arn:')) return [nameOrArn];
  const resource = nameOrArn.split(':').slice(5).join(':');
  const rest = resource.startsWith('parameter') ? resource.slice('parameter'.length) : resource;
  const name = rest.startsWith('//') ? rest.slice(1) : rest;
  return name.lastIndexOf('/') === 0 ? [name, name.slice(1)] : [name];
}

function filtered<T>(source: string, items: readonly T[], accept: (item: T) => boolean): T[] {
  try {
    return items.filter(accept);
  } catch (error) {
    if (error instanceof UnsupportedFilterError) {
      throw new SourceUnavailableError(source, 'invalid-response', error.message, { cause: error });
    }
    throw error;
  }
}

export function createWorldAwsFacts(options: WorldFactsOptions): AwsFactsPort {
  const { world, now } = options;
  const context = { accountId: world.account, now };
  const instanceProfiles = new Map(
    world.iam.instanceProfiles.map((profile) => [profile.InstanceProfileName, profile])
  );
  const roles = new Map(world.iam.roles.map((role) => [role.RoleName, role]));
  // A role recorded only inside an instance profile still answers GetRole.
  for (const profile of world.iam.instanceProfiles) {
    for (const role of profile.Roles ?? []) {
      if (!roles.has(role.RoleName)) roles.set(role.RoleName, role);
    }
  }

  function parameterValue(name: string): string | undefined {
    const parameters = world.ssm.parameters;
    // Own keys only: a parameter named `toString` is not Object.prototype's.
    const found = parameterNamesOf(name).find((candidate) => Object.hasOwn(parameters, candidate));
    return found === undefined ? undefined : parameters[found];
  }

  return {
    // Each EC2 list: its recorded section, matched with the descriptor's filter semantics.
    ...ec2ListMethods((fact, key) => {
      const section: readonly object[] = world.ec2[key];
      const items = section.map((item) => fact.fromSdk(item));
      return async (query) =>
        filtered(fact.action, items, (item) => fact.matches(item, query, context));
    }),

    async describeInstanceTypeOfferings(): Promise<readonly InstanceTypeOffering[] | undefined> {
      // Own keys only, like SSM parameters: a region named `constructor` is not a prototype's.
      const byRegion = world.instanceTypeOfferings;
      if (byRegion === undefined || !Object.hasOwn(byRegion, world.region)) return undefined;
      return (byRegion[world.region] ?? []).map((offering) => ({
        instanceType: offering.instanceType,
        zone: offering.zone,
      }));
    },

    async getParameter(name: string): Promise<string | undefined> {
      return parameterValue(name);
    },

    async getParameters(names: readonly string[]): Promise<Map<string, string | undefined>> {
      return new Map(names.map((name) => [name, parameterValue(name)]));
    },

    async getInstanceProfile(name: string): Promise<InstanceProfile | undefined> {
      const profile = instanceProfiles.get(name);
      return profile ? instanceProfileFromSdk(profile) : undefined;
    },

    async getRole(name: string): Promise<Role | undefined> {
      const role = roles.get(name);
      return role ? roleFromSdk(role, role.AttachedPolicies ?? []) : undefined;
    },
  };
}
