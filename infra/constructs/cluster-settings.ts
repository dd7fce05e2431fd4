// The construct's `clusterSettings`: validated at synth, then split where each applies. The scan
// environment and the ignore rules travel to the Lambdas (CLUSTER_ENVIRONMENTS, IGNORE_RULES); the
// email minimum becomes the subscription filter policy (alerts.ts).
import { CHECKS } from '../../lambda/core/checks/index.js';
import {
  type ClusterSettingsMap,
  clusterEnvironmentsValue,
  clusterSettingsKeyProblems,
  clusterSettingsMapSchema,
} from '../../lambda/core/cluster-settings.js';
import { issuePath } from '../../lambda/core/ignore-rules.js';

/** The settings, validated against the check catalog and the configured clusters; throws. */
export function validClusterSettings(props: {
  readonly clusters: readonly string[];
  readonly discoverClusters?: string | undefined;
  readonly clusterSettings?: ClusterSettingsMap | undefined;
}): ClusterSettingsMap {
  const settings = props.clusterSettings ?? {};
  const parsed = clusterSettingsMapSchema(CHECKS.map((check) => check.id)).safeParse(settings);
  const problems = [
    ...clusterSettingsKeyProblems(Object.keys(settings), {
      clusters: props.clusters,
      discovery: (props.discoverClusters ?? '') !== '',
    }).map(({ key, message }) => `${issuePath('clusterSettings', [key])}: ${message}`),
    ...(parsed.error?.issues ?? []).map(
      (issue) => `${issuePath('clusterSettings', issue.path)}: ${issue.message}`
    ),
  ];
  if (problems.length > 0 || !parsed.success) {
    throw new Error(`NodeClassScanner: ${problems.join('; ')}`);
  }
  return parsed.data;
}

/**
 * The CLUSTER_ENVIRONMENTS variable. It shares the ignore rules' part of the Lambdas' 4 KB
 * environment, so `budget` is what the rules left of it.
 */
export function clusterEnvironmentsVariable(settings: ClusterSettingsMap, budget: number): string {
  const value = clusterEnvironmentsValue(settings);
  if (value.length > budget) {
    throw new Error(
      `NodeClassScanner: the per-cluster environments take ${value.length} characters of the ` +
        `Lambdas' 4 KB environment, and the ignore rules left ${Math.max(budget, 0)}`
    );
  }
  return value;
}
