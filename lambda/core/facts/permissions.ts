// Results of simulating the Karpenter controller role's permissions (controller-* checks).

export interface PermissionFacts {
  readonly controllerRoleArn?: string;
}
