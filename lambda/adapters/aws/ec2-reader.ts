// EC2 Describe* calls exactly as Karpenter issues them (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/).
import {
  DescribeCapacityReservationsCommand,
  type DescribeCapacityReservationsCommandInput,
  DescribeImagesCommand,
  DescribeInstanceTypeOfferingsCommand,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  type EC2Client,
  type Filter,
} from '@aws-sdk/client-ec2';
import type {
  CapacityReservation,
  Ec2Filter,
  Image,
  InstanceTypeOffering,
  SecurityGroup,
  Subnet,
} from '../../core/facts/aws.js';
import type { FilterQuery, ImageQuery } from '../../core/ports/aws-facts.js';
import { toSourceUnavailable } from './aws-errors.js';
import { collectPages } from './paginate.js';
import {
  capacityReservationFromSdk,
  imageFromSdk,
  instanceTypeOfferingFromSdk,
  securityGroupFromSdk,
  subnetFromSdk,
} from './sdk-shapes.js';

export const ec2ReaderActions = [
  'ec2:DescribeImages',
  'ec2:DescribeSubnets',
  'ec2:DescribeSecurityGroups',
  'ec2:DescribeCapacityReservations',
  'ec2:DescribeInstanceTypeOfferings',
] as const;

/** Page sizes Karpenter uses. */
export const IMAGES_PAGE_SIZE = 1000;
export const SUBNETS_PAGE_SIZE = 500;
export const SECURITY_GROUPS_PAGE_SIZE = 500;
export const CAPACITY_RESERVATIONS_PAGE_SIZE = 1000;
/** The API's maximum: a region's few thousand zone offerings in a handful of pages. */
export const INSTANCE_TYPE_OFFERINGS_PAGE_SIZE = 1000;

export type Ec2Sender = Pick<EC2Client, 'send'>;

function sdkFilters(filters: readonly Ec2Filter[]): Filter[] {
  return filters.map((filter) => ({ Name: filter.name, Values: [...filter.values] }));
}

async function guarded<T>(source: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw toSourceUnavailable(source, error);
  }
}

export function createEc2Reader(ec2: Ec2Sender) {
  return {
    describeImages(query: ImageQuery): Promise<Image[]> {
      return guarded('ec2:DescribeImages', () =>
        collectPages(
          (token) =>
            ec2.send(
              new DescribeImagesCommand({
                Filters: sdkFilters(query.filters),
                ...(query.owners === undefined ? {} : { Owners: [...query.owners] }),
                IncludeDeprecated: query.includeDeprecated,
                MaxResults: IMAGES_PAGE_SIZE,
                ...(token === undefined ? {} : { NextToken: token }),
              })
            ),
          (page) => page.Images?.map(imageFromSdk),
          (page) => page.NextToken
        )
      );
    },

    describeSubnets(query: FilterQuery): Promise<Subnet[]> {
      return guarded('ec2:DescribeSubnets', () =>
        collectPages(
          (token) =>
            ec2.send(
              new DescribeSubnetsCommand({
                Filters: sdkFilters(query.filters),
                MaxResults: SUBNETS_PAGE_SIZE,
                ...(token === undefined ? {} : { NextToken: token }),
              })
            ),
          (page) => page.Subnets?.map(subnetFromSdk),
          (page) => page.NextToken
        )
      );
    },

    describeSecurityGroups(query: FilterQuery): Promise<SecurityGroup[]> {
      return guarded('ec2:DescribeSecurityGroups', () =>
        collectPages(
          (token) =>
            ec2.send(
              new DescribeSecurityGroupsCommand({
                Filters: sdkFilters(query.filters),
                MaxResults: SECURITY_GROUPS_PAGE_SIZE,
                ...(token === undefined ? {} : { NextToken: token }),
              })
            ),
          (page) => page.SecurityGroups?.map(securityGroupFromSdk),
          (page) => page.NextToken
        )
      );
    },

    describeCapacityReservations(query: FilterQuery): Promise<CapacityReservation[]> {
      // By id Karpenter sends CapacityReservationIds without MaxResults
      // (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/capacityreservation/).
      const base: DescribeCapacityReservationsCommandInput =
        query.ids === undefined
          ? { Filters: sdkFilters(query.filters), MaxResults: CAPACITY_RESERVATIONS_PAGE_SIZE }
          : { Filters: sdkFilters(query.filters), CapacityReservationIds: [...query.ids] };
      return guarded('ec2:DescribeCapacityReservations', () =>
        collectPages(
          (token) =>
            ec2.send(
              new DescribeCapacityReservationsCommand({
                ...base,
                ...(token === undefined ? {} : { NextToken: token }),
              })
            ),
          (page) => page.CapacityReservations?.map(capacityReservationFromSdk),
          (page) => page.NextToken
        )
      );
    },

    /** Every zone offering of the client's region, unfiltered (one query serves every NodeClass). */
    describeInstanceTypeOfferings(): Promise<InstanceTypeOffering[]> {
      return guarded('ec2:DescribeInstanceTypeOfferings', () =>
        collectPages(
          (token) =>
            ec2.send(
              new DescribeInstanceTypeOfferingsCommand({
                LocationType: 'availability-zone',
                MaxResults: INSTANCE_TYPE_OFFERINGS_PAGE_SIZE,
                ...(token === undefined ? {} : { NextToken: token }),
              })
            ),
          (page) =>
            page.InstanceTypeOfferings?.flatMap((offering) => {
              const mapped = instanceTypeOfferingFromSdk(offering);
              return mapped ? [mapped] : [];
            }),
          (page) => page.NextToken
        )
      );
    },
  };
}
