// What the scanner needs inside a cluster to read Karpenter's objects, as copy-paste fixes. Access
// policies cannot cover CRDs (AmazonEKSViewPolicy has no CRD groups;
// https://docs.aws.amazon.com/eks/latest/userguide/access-policy-permissions.html), so the access
// entry maps the scanner to a Kubernetes group bound to a narrow ClusterRole.
import { KARPENTER_CRD_NAMES } from './admission/crd-names.js';

export const SCANNER_KUBERNETES_GROUP = 'nodeclass-scanner';

/** The read access the scanner needs: get/list/watch on these resources. */
const SCANNER_RBAC_RULES: readonly {
  readonly apiGroup: string;
  readonly resource: string;
  /** Only these objects, and then only `get` (RBAC cannot restrict a list by name). */
  readonly resourceNames?: readonly string[];
}[] = [
  { apiGroup: 'karpenter.k8s.aws', resource: 'ec2nodeclasses' },
  { apiGroup: 'karpenter.sh', resource: 'nodepools' },
  { apiGroup: 'apps', resource: 'deployments' },
  { apiGroup: '', resource: 'serviceaccounts' },
  // Karpenter's installed CRDs, which decide what the API server admits.
  {
    apiGroup: 'apiextensions.k8s.io',
    resource: 'customresourcedefinitions',
    resourceNames: KARPENTER_CRD_NAMES,
  },
];

function ruleYaml(rule: (typeof SCANNER_RBAC_RULES)[number]): string {
  const head = `  - apiGroups: ["${rule.apiGroup}"]\n    resources: ["${rule.resource}"]`;
  if (rule.resourceNames === undefined) return `${head}\n    verbs: ["get", "list", "watch"]`;
  const names = rule.resourceNames.map((name) => `"${name}"`).join(', ');
  return `${head}\n    resourceNames: [${names}]\n    verbs: ["get"]`;
}

/** ClusterRole + ClusterRoleBinding for `kubectl apply -f -`. */
export function scannerRbacYaml(group = SCANNER_KUBERNETES_GROUP): string {
  const rules = SCANNER_RBAC_RULES.map(ruleYaml).join('\n');
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
