// Per-cluster settings (the `clusterSettings` context key, the construct's `clusterSettings` prop):
// a cluster's scan environment, the least severe finding emailed for it, and ignore rules scoped
// to it. A key is a cluster target as in `clusters` (`name` or `name@region`), and settings resolve
// to the cluster's name (the `cluster` the rules, the environments and the email filter policy's
// message attribute match): they apply to every cluster of that name. The service keeps each
// cluster's state by its identity (account, region, name), so same-named clusters of two regions
// are scanned and alerted apart; only their settings are shared, so a `name@region` key that could
// be read as one of them alone is refused.
import * as z from 'zod';
import { clusterNameOf, clusterTargetProblem } from './cluster-identity.js';
import { type IgnoreRule, ignoreRuleSchema } from './ignore-rules.js';
import { SEVERITIES, type Severity } from './model.js';
import { didYouMean } from './suggest.js';

const SCAN_ENVIRONMENTS = ['production', 'non-production'] as const;
type ScanEnvironment = (typeof SCAN_ENVIRONMENTS)[number];

export interface ClusterSettings {
  /** Overrides the global scan environment for this cluster. */
  readonly environment?: ScanEnvironment | undefined;
  /** Overrides the global least severe finding emailed, for this cluster's findings. */
  readonly alertMinSeverity?: Severity | undefined;
  /** Accepted findings of this cluster: config rules whose `resource` is a `Kind/name` glob. */
  readonly ignore?: readonly IgnoreRule[] | undefined;
}

export type ClusterSettingsMap = Readonly<Record<string, ClusterSettings>>;

/** A cluster's own rule: the config rule's fields, `resource` without the (implied) cluster. */
function clusterIgnoreRuleSchema(knownCheckIds?: readonly string[]) {
  const rule = ignoreRuleSchema(knownCheckIds);
  return rule.extend({
    resource: z.string().superRefine((resource, context) => {
      const parts = resource.trim().split('/');
      if (parts.length !== 2 || parts.some((part) => part === '')) {
        context.addIssue({
          code: 'custom',
          message: `"${resource}" is not Kind/name: the cluster is implied (e.g. EC2NodeClass/legacy-*)`,
        });
        return;
      }
      // The config rule's own checks (kinds), on the same glob under any cluster.
      const checked = rule.shape.resource.safeParse(`*/${resource.trim()}`);
      for (const issue of checked.error?.issues ?? []) {
        context.addIssue({ code: 'custom', message: issue.message });
      }
    }),
  });
}

/** The settings of one cluster; unknown fields are errors. */
export function clusterSettingsSchema(knownCheckIds?: readonly string[]) {
  return z.strictObject({
    environment: z.enum(SCAN_ENVIRONMENTS).optional(),
    alertMinSeverity: z.enum(SEVERITIES).optional(),
    ignore: z.array(clusterIgnoreRuleSchema(knownCheckIds)).optional(),
  });
}

/** `{ target: settings }`, each validated (keys are checked against the clusters separately). */
export function clusterSettingsMapSchema(knownCheckIds?: readonly string[]) {
  return z.record(z.string(), clusterSettingsSchema(knownCheckIds));
}

export interface KeyProblem {
  readonly key: string;
  readonly message: string;
}

/**
 * Keys that name no configured cluster (unless discovery may find it), or the same cluster twice,
 * and `name@region` keys whose name several configured clusters share (settings apply by name).
 * With discovery on, a key that is not configured must still be a valid cluster name.
 */
export function clusterSettingsKeyProblems(
  keys: readonly string[],
  options: { readonly clusters: readonly string[]; readonly discovery: boolean }
): KeyProblem[] {
  const problems: KeyProblem[] = [];
  const names = options.clusters.map(clusterNameOf);
  const seen = new Map<string, string>();
  for (const key of keys) {
    const name = clusterNameOf(key);
    const configured =
      options.clusters.includes(key) || (!key.includes('@') && names.includes(name));
    if (!configured && !(options.discovery && clusterTargetProblem(key) === undefined)) {
      problems.push({
        key,
        message:
          `"${key}" is not one of the clusters (${options.clusters.join(', ') || 'none'})` +
          didYouMean(key, options.clusters) +
          (options.discovery ? '' : '; discovered clusters need discoverClusters set'),
      });
    }
    const earlier = seen.get(name);
    if (earlier !== undefined) {
      problems.push({ key, message: `"${key}" and "${earlier}" are the same cluster` });
    }
    const sharing = options.clusters.filter((target) => clusterNameOf(target) === name);
    if (key.includes('@') && sharing.length > 1) {
      problems.push({
        key,
        message: `settings apply to every cluster named "${name}" (${sharing.join(', ')}): use the key "${name}"`,
      });
    }
    seen.set(name, key);
  }
  return problems;
}

/** Every cluster's own rules as config rules: `Kind/name` → `<cluster name>/Kind/name`. */
export function scopedIgnoreRules(settings: ClusterSettingsMap): IgnoreRule[] {
  return Object.entries(settings).flatMap(([target, own]) =>
    (own.ignore ?? []).map((rule) => ({
      ...rule,
      resource: `${clusterNameOf(target)}/${rule.resource.trim()}`,
    }))
  );
}

/** `name=environment,…` for the clusters that set one (the Lambdas' CLUSTER_ENVIRONMENTS). */
export function clusterEnvironmentsValue(settings: ClusterSettingsMap): string {
  return Object.entries(settings)
    .flatMap(([target, own]) =>
      own.environment === undefined ? [] : [`${clusterNameOf(target)}=${own.environment}`]
    )
    .join(',');
}

/** Cluster name → least severe finding emailed, for the clusters that set one. */
export function clusterAlertMinimums(settings: ClusterSettingsMap): ReadonlyMap<string, Severity> {
  return new Map(
    Object.entries(settings).flatMap(([target, own]) =>
      own.alertMinSeverity === undefined
        ? []
        : [[clusterNameOf(target), own.alertMinSeverity] as const]
    )
  );
}
