// The EC2 queries the scanner sends, exactly as Karpenter builds them: data, shared by the
// selectors that plan them and the ports that answer them.
/** An EC2 filter, as DescribeImages/DescribeSubnets/… take it. */
export interface Ec2Filter {
  readonly name: string;
  readonly values: readonly string[];
}

/** A DescribeImages query exactly as Karpenter builds it (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/amifamily/ami.go). */
export interface ImageQuery {
  readonly filters: readonly Ec2Filter[];
  readonly owners?: readonly string[];
  readonly includeDeprecated: boolean;
}

/** A DescribeSubnets / DescribeSecurityGroups / DescribeCapacityReservations query. */
export interface FilterQuery {
  readonly filters: readonly Ec2Filter[];
  /** Id list (`CapacityReservationIds`) where the API takes ids rather than an id filter. */
  readonly ids?: readonly string[];
}
