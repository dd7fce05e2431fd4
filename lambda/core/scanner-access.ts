// What the scanner needs inside a cluster to read Karpenter's objects, as copy-paste fixes. Access
// policies cannot cover CRDs (AmazonEKSViewPolicy has no CRD groups;
// https://docs.aws.amazon.com/eks/latest/userguide/access-policy-permissions.html), so the access
// entry maps the scanner to a Kubernetes group bound to a narrow ClusterRole.

export const SCANNER_KUBERNETES_GROUP = 'nodeclass-scanner';

/** The read access the scanner needs: get/list/watch on these resources. */
const SCANNER_RBAC_RULES: readonly {
  readonly apiGroup: string;
  readonly resource: string;
}[] = [
  { apiGroup: 'karpenter.k8s.aws', resource: 'ec2nodeclasses' },
  { apiGroup: 'karpenter.sh', resource: 'nodepools' },
  { apiGroup: 'apps', resource: 'deployments' },
  { apiGroup: '', resource: 'serviceaccounts' },
];

/** ClusterRole + ClusterRoleBinding for `kubectl apply -f -`. */
export function scannerRbacYaml(group = SCANNER_KUBERNETES_GROUP): string {
  const rules = SCANNER_RBAC_RULES.map(
    ({ apiGroup, resource }) =>
      `  - apiGroups: ["${apiGroup}"]\n    resources: ["${resource}"]\n    verbs: ["get", "list", "watch"]`
  ).join('\n');
  return [
    'apiVersion: rbac.authorization.k8s.io/v1',
    'kind: ClusterRole',
    'metadata:',
    '  name: nodeclass-scanner',
    'rules:',
    rules,
    '---',
    'apiVersion: rbac.authorization.k8s.io/v1',
    'kind: ClusterRoleBinding',
    'metadata:',
    '  name: nodeclass-scanner',
    'roleRef:',
    '  apiGroup: rbac.authorization.k8s.io',
    '  kind: ClusterRole',
    '  name: nodeclass-scanner',
    'subjects:',
    '  - apiGroup: rbac.authorization.k8s.io',
    '    kind: Group',
    `    name: ${group}`,
    '',
  ].join('\n');
}

/** The `aws eks create-access-entry` command that maps the scanner's role to the RBAC group. */
export function accessEntryCommand(input: {
  readonly cluster: string;
  readonly region?: string;
  readonly principalArn?: string;
}): string {
  return [
    'aws eks create-access-entry',
    `--cluster-name ${input.cluster}`,
    ...(input.region ? [`--region ${input.region}`] : []),
    `--principal-arn ${input.principalArn ?? '<scanner-role-arn>'}`,
    '--type STANDARD',
    `--kubernetes-groups ${SCANNER_KUBERNETES_GROUP}`,
  ].join(' ');
}
