// Whether a group's simulations stood on the cluster name: Karpenter tags what it creates with its
// CLUSTER_NAME setting (`kubernetes.io/cluster/<name>`, `eks:eks-cluster-name`) and names its
// instance profiles' path after it
// (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/instanceprofile/instanceprofile.go).
// When the controller Deployment could not be read, the scan stands in with the EKS cluster name.
import type { PermissionFacts, PermissionGroup, SimulationRequest } from '../facts/permissions.js';
import {
  mayApply,
  type ParsedStatement,
  parseStatements,
  policyConditionKeys,
} from './policy-statements.js';

/** Where `name` sits in the group's requests: tag-key prefixes, keys of its values, ARNs. */
interface NameUses {
  /** Lower-cased context keys up to the name (`aws:requesttag/kubernetes.io/cluster/`). */
  readonly keyPrefixes: Set<string>;
  /** Lower-cased context keys whose values hold the name (`aws:requesttag/eks:eks-cluster-name`). */
  readonly valueKeys: Set<string>;
  readonly resources: { readonly request: SimulationRequest; readonly arn: string }[];
}

const endsWithSegment = (text: string, name: string) => text === name || text.endsWith(`/${name}`);

function nameUsesOf(requests: readonly SimulationRequest[], name: string): NameUses {
  const uses: NameUses = { keyPrefixes: new Set(), valueKeys: new Set(), resources: [] };
  for (const request of requests) {
    for (const entry of request.context) {
      if (entry.key.endsWith(`/${name}`)) {
        uses.keyPrefixes.add(entry.key.slice(0, -name.length).toLowerCase());
      }
      if (entry.values.some((value) => endsWithSegment(value, name))) {
        uses.valueKeys.add(entry.key.toLowerCase());
      }
    }
    for (const arn of request.resourceArns) {
      // The EKS cluster's ARN carries its own name, which the scan knows (eks:DescribeCluster).
      if (arn.split(':')[2] === 'eks') continue;
      const segments = arn.split('/');
      if (segments.some((segment) => segment === name || segment.startsWith(`${name}_`))) {
        uses.resources.push({ request, arn });
      }
    }
  }
  return uses;
}

/** `arn` with each path segment that is `name` (or its `name_` profile prefix) replaced. */
function renamed(arn: string, name: string, replacement: string): string {
  return arn
    .split('/')
    .map((segment) =>
      segment === name
        ? replacement
        : segment.startsWith(`${name}_`)
          ? `${replacement}${segment.slice(name.length)}`
          : segment
    )
    .join('/');
}

/**
 * Whether the group's verdict may change with Karpenter's CLUSTER_NAME, given that the simulations
 * used `name` for it: the name is in a request (a tag key, a tag value, an instance profile ARN)
 * and the controller role's policies may look at it there. A condition on the tag key or value
 * counts; a Resource pattern counts unless it names the resource for every cluster name or for
 * none. Unread or unparsable policies: it may.
 */
export function clusterNameMayMatter(
  facts: PermissionFacts,
  group: PermissionGroup,
  name: string
): boolean {
  if (name === '') return true;
  const requests = facts.simulations
    .map((outcome) => outcome.request)
    .filter((request) => request.group === group);
  const uses = nameUsesOf(requests, name);
  if (uses.keyPrefixes.size === 0 && uses.valueKeys.size === 0 && uses.resources.length === 0) {
    return false;
  }
  const policies = facts.controllerPolicies;
  if (policies === undefined) return true;
  const keys = policyConditionKeys(policies);
  if (keys === undefined) return true;
  for (const key of keys.keys()) {
    if (uses.valueKeys.has(key)) return true;
    for (const prefix of uses.keyPrefixes) if (key.startsWith(prefix)) return true;
  }
  if (uses.resources.length === 0) return false;
  const statements = parseStatements(policies);
  if (statements === undefined) return true;
  // `\u0001` is in no cluster name nor pattern: a statement that applies with it and with `name`
  // covers the name by a wildcard; one that applies for no name is beside the point.
  return uses.resources.some(({ request, arn }) => {
    const otherName = renamed(arn, name, '\u0001');
    return statements.some((statement) => {
      const someName = [
        arn,
        ...['*', ...namesIn(statement)].map((other) => renamed(arn, name, other)),
      ];
      return request.actions.some(
        (action) =>
          someName.some((resource) => mayApply(statement, action, resource)) &&
          !(mayApply(statement, action, arn) && mayApply(statement, action, otherName))
      );
    });
  });
}

/** Literal path segments of a statement's resource patterns: names a cluster might have. */
function namesIn(statement: ParsedStatement): string[] {
  const patterns = [...(statement.resource ?? []), ...(statement.notResource ?? [])];
  return [
    ...new Set(
      patterns
        .flatMap((pattern) => pattern.split('/'))
        .flatMap((segment) => [segment, segment.split('_')[0] ?? segment])
        .filter((segment) => segment !== '' && !/[*?$]/.test(segment))
    ),
  ];
}
