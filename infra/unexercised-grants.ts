/**
 * Granted actions a run may legitimately never call, because the call depends on configuration or
 * on what the scanned account holds. A deployment simulation should not report these as unused.
 * Also exported from permissions.ts.
 */
export const GRANTS_KEPT_WITHOUT_USE: readonly { action: string; reason: string }[] = [
  {
    action: 'sts:AssumeRole',
    reason: 'DryRun mode only; granted only with a DryRun role configured',
  },
  {
    action: 'eks:ListClusters',
    reason: 'dispatch: only when cluster discovery (discoverClusters) is on',
  },
  {
    action: 'eks:DescribeCluster',
    reason: 'dispatch: only when discovery filters clusters by tag (scans describe every cluster)',
  },
  {
    action: 'eks:ListAccessEntries',
    reason: 'only for clusters whose authentication mode includes the EKS API',
  },
  {
    action: 'eks:DescribeAccessEntry',
    reason: 'only for access entries the cluster lists',
  },
  {
    action: 'eks:ListPodIdentityAssociations',
    reason: 'only once a cluster was described and read (an unreachable cluster stops earlier)',
  },
  {
    action: 'eks:DescribePodIdentityAssociation',
    reason: 'only for Pod Identity associations the cluster lists (not for IRSA controllers)',
  },
  {
    action: 'ec2:DescribeCapacityReservations',
    reason: 'only for NodeClasses with capacityReservationSelectorTerms',
  },
  {
    action: 'ec2:DescribeInstanceTypeOfferings',
    reason: 'only for NodeClasses a NodePool launches through (once per scan)',
  },
  {
    action: 'ec2:DescribeInstanceTypes',
    reason: 'only for NodeClasses a NodePool launches through (once per scan)',
  },
  {
    action: 'ssm:GetParameter',
    reason:
      'only for ssmParameter terms naming an ARN or a version/label, or name by name after a denied GetParameters',
  },
  {
    action: 'ssm:GetParameters',
    reason:
      'only for amiSelectorTerms that name an alias, or an SSM parameter under /aws/service/ or ssmParameterPrefixes',
  },
  {
    action: 'iam:ListAttachedRolePolicies',
    reason: 'only for node roles that exist (GetRole found them)',
  },
  {
    action: 'iam:GetRolePolicy',
    reason:
      'only for controller roles with inline policies (ListRolePolicies lists none otherwise)',
  },
  {
    action: 'iam:ListEntitiesForPolicy',
    reason: 'iam-event: only for events on a managed policy (not on a role)',
  },
  {
    action: 'iam:ListInstanceProfilesForRole',
    reason: 'iam-event: only for events that name a role used through instance profiles',
  },
  {
    action: 'iam:SimulatePrincipalPolicy',
    reason: 'only when a Karpenter controller role was found for the cluster',
  },
  {
    action: 'dynamodb:DeleteItem',
    reason: 'only when a notification claim is released after a failed publish',
  },
  {
    action: 'dynamodb:BatchWriteItem',
    reason:
      'only when the NodeClass index of a cluster changes, or a scan simulated verdicts to keep',
  },
  {
    action: 'dynamodb:BatchGetItem',
    reason:
      'only when a scan simulates for a controller role whose policies it read, with simulationCacheHours above 0',
  },
  { action: 'sns:Publish', reason: 'only when a finding changes, or a digest or reminder is due' },
  {
    action: 'sqs:SendMessage',
    reason: 'dispatch: only when there is at least one cluster to scan',
  },
];
