// AwsFactsPort over a world file: the recorded lists, filtered with the same EC2 filter semantics
// the live API applies (core's matcher, not a second copy), so a snapshot replays the live scan.

import { imageMatchesQuery } from '../../core/ami/queries.js';
import type {
  CapacityReservation,
  Image,
  InstanceProfile,
  InstanceTypeOffering,
  Role,
  SecurityGroup,
  Subnet,
} from '../../core/facts/aws.js';
import type { AwsFactsPort, FilterQuery, ImageQuery } from '../../core/ports/aws-facts.js';
import { capacityReservationMatchesQuery } from '../../core/selectors/capacity-reservations.js';
import { UnsupportedFilterError } from '../../core/selectors/ec2-filter.js';
import { securityGroupMatchesQuery } from '../../core/selectors/security-groups.js';
import { subnetMatchesQuery } from '../../core/selectors/subnets.js';
import { SourceUnavailableError } from '../../shared/errors.js';
import {
  capacityReservationFromSdk,
  imageFromSdk,
  instanceProfileFromSdk,
  roleFromSdk,
  securityGroupFromSdk,
  subnetFromSdk,
} from '../aws/sdk-shapes.js';
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
  const images = world.ec2.images.map(imageFromSdk);
  const subnets = world.ec2.subnets.map(subnetFromSdk);
  const securityGroups = world.ec2.securityGroups.map(securityGroupFromSdk);
  const reservations = world.ec2.capacityReservations.map(capacityReservationFromSdk);
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
    async describeImages(query: ImageQuery): Promise<readonly Image[]> {
      return filtered('ec2:DescribeImages', images, (image) =>
        imageMatchesQuery(image, query, { accountId: world.account, now })
      );
    },

    async describeSubnets(query: FilterQuery): Promise<readonly Subnet[]> {
      return filtered('ec2:DescribeSubnets', subnets, (subnet) =>
        subnetMatchesQuery(subnet, query)
      );
    },

    async describeSecurityGroups(query: FilterQuery): Promise<readonly SecurityGroup[]> {
      return filtered('ec2:DescribeSecurityGroups', securityGroups, (group) =>
        securityGroupMatchesQuery(group, query)
      );
    },

    async describeCapacityReservations(
      query: FilterQuery
    ): Promise<readonly CapacityReservation[]> {
      return filtered('ec2:DescribeCapacityReservations', reservations, (reservation) =>
        capacityReservationMatchesQuery(reservation, query)
      );
    },

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
