// AwsFactsPort over a world file: the recorded lists, filtered with the same EC2 filter semantics
// the live API applies (core's matcher, not a second copy), so a snapshot replays the live scan.
import type {
  CapacityReservation,
  Image,
  InstanceProfile,
  Role,
  SecurityGroup,
  Subnet,
} from '../../core/facts/aws.js';
import type { AwsFactsPort, FilterQuery, ImageQuery } from '../../core/ports-aws.js';
import { matchesFilters, UnsupportedFilterError } from '../../core/selectors/ec2-filter.js';
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

function imageAttribute(image: Image, name: string): readonly (string | undefined)[] | undefined {
  switch (name) {
    case 'image-id':
      return [image.id];
    case 'name':
      return [image.name];
    case 'state':
      return [image.state];
    case 'architecture':
      return [image.architecture];
    case 'owner-id':
      return [image.ownerId];
    case 'owner-alias':
      return [image.ownerAlias];
    default:
      return undefined;
  }
}

function subnetAttribute(
  subnet: Subnet,
  name: string
): readonly (string | undefined)[] | undefined {
  switch (name) {
    case 'subnet-id':
      return [subnet.id];
    case 'vpc-id':
      return [subnet.vpcId];
    case 'availability-zone':
      return [subnet.availabilityZone];
    case 'availability-zone-id':
      return [subnet.availabilityZoneId];
    default:
      return undefined;
  }
}

function securityGroupAttribute(
  group: SecurityGroup,
  name: string
): readonly (string | undefined)[] | undefined {
  switch (name) {
    case 'group-id':
      return [group.id];
    case 'group-name':
      return [group.name];
    case 'vpc-id':
      return [group.vpcId];
    default:
      return undefined;
  }
}

function capacityReservationAttribute(
  reservation: CapacityReservation,
  name: string
): readonly (string | undefined)[] | undefined {
  switch (name) {
    case 'capacity-reservation-id':
      return [reservation.id];
    case 'state':
      return [reservation.state];
    case 'owner-id':
      return [reservation.ownerId];
    case 'instance-match-criteria':
      return [reservation.instanceMatchCriteria];
    case 'instance-type':
      return [reservation.instanceType];
    case 'availability-zone':
      return [reservation.availabilityZone];
    case 'reservation-type':
      return [reservation.reservationType];
    default:
      return undefined;
  }
}

/** `Owners`: `self` is the caller's account, 12 digits an account id, anything else an owner alias. */
export function imageOwnedBy(image: Image, owners: readonly string[], account: string): boolean {
  return owners.some((owner) => {
    if (owner === 'self') return image.ownerId === account;
    if (/^\d{12}$/.test(owner)) return image.ownerId === owner;
    return image.ownerAlias === owner;
  });
}

/** SSM accepts a name or an ARN (`arn:aws:ssm:r:a:parameter/x/y` → `/x/y`, `…parameter/x` → `x`). */
export function parameterNameOf(nameOrArn: string): string {
  if (!nameOrArn.startsWith('arn:')) return nameOrArn;
  const resource = nameOrArn.split(':').slice(5).join(':');
  const rest = resource.startsWith('parameter') ? resource.slice('parameter'.length) : resource;
  return rest.startsWith('//') ? rest.slice(1) : rest.replace(/^\/(?=[^/]*$)/, '');
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

  return {
    async describeImages(query: ImageQuery): Promise<readonly Image[]> {
      return filtered('ec2:DescribeImages', images, (image) => {
        // DescribeImages hides disabled images unless IncludeDisabled (never sent by Karpenter),
        // and deprecated ones the caller does not own unless IncludeDeprecated.
        if (image.state === 'disabled') return false;
        if (
          !query.includeDeprecated &&
          image.ownerId !== world.account &&
          image.deprecationTime !== undefined &&
          Date.parse(image.deprecationTime) <= now.getTime()
        ) {
          return false;
        }
        if (query.owners !== undefined && !imageOwnedBy(image, query.owners, world.account)) {
          return false;
        }
        return matchesFilters('images', query.filters, image.tags, (name) =>
          imageAttribute(image, name)
        );
      });
    },

    async describeSubnets(query: FilterQuery): Promise<readonly Subnet[]> {
      return filtered('ec2:DescribeSubnets', subnets, (subnet) =>
        matchesFilters('subnets', query.filters, subnet.tags, (name) =>
          subnetAttribute(subnet, name)
        )
      );
    },

    async describeSecurityGroups(query: FilterQuery): Promise<readonly SecurityGroup[]> {
      return filtered('ec2:DescribeSecurityGroups', securityGroups, (group) =>
        matchesFilters('security groups', query.filters, group.tags, (name) =>
          securityGroupAttribute(group, name)
        )
      );
    },

    async describeCapacityReservations(
      query: FilterQuery
    ): Promise<readonly CapacityReservation[]> {
      return filtered(
        'ec2:DescribeCapacityReservations',
        reservations,
        (reservation) =>
          (query.ids === undefined || query.ids.includes(reservation.id)) &&
          matchesFilters('capacity reservations', query.filters, reservation.tags, (name) =>
            capacityReservationAttribute(reservation, name)
          )
      );
    },

    async getParameter(name: string): Promise<string | undefined> {
      return world.ssm.parameters[parameterNameOf(name)];
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
