// Which cluster a scan is about, in the service: an EKS cluster name is unique only within one
// account and region, so the service (one deployment per account, scanning several regions) names
// a cluster by all three. What people read stays short: the name alone in the deployment's home
// region, `name@region` elsewhere (the syntax of the `clusters` setting). The CLI reads one region
// per scan and never needs more than the name.
import { regionProblem } from './region.js';

export interface ClusterIdentity {
  readonly account: string;
  readonly region: string;
  readonly name: string;
}

/**
 * The identity as one string, `<account>/<region>/<name>`: the key the service stores a cluster's
 * state under. Neither an account id, a region nor an EKS name can hold a `/`, so it is unambiguous,
 * and never equal to a bare name (the key of state stored before identities).
 */
export function clusterKey(cluster: ClusterIdentity): string {
  return `${cluster.account}/${cluster.region}/${cluster.name}`;
}

/** `prod` in the home region (or when the home region is unknown), `prod@eu-west-1` elsewhere. */
export function clusterLabel(
  cluster: Pick<ClusterIdentity, 'name' | 'region'>,
  homeRegion: string | undefined
): string {
  return homeRegion === undefined || cluster.region === '' || cluster.region === homeRegion
    ? cluster.name
    : `${cluster.name}@${cluster.region}`;
}

/**
 * The name in a label or a `clusters` target (`prod@eu-west-1` → `prod`): EKS names cannot hold
 * an `@`.
 */
export function clusterNameOf(label: string): string {
  return label.split('@')[0] ?? label;
}

/**
 * The identity of a scan target (`region` omitted: the home region) in the deployment's account.
 * An unknown account or region stays empty rather than guessed.
 */
export function identityOf(
  target: { readonly cluster: string; readonly region?: string | undefined },
  home: { readonly account?: string | undefined; readonly region?: string | undefined }
): ClusterIdentity {
  return {
    account: home.account ?? '',
    region: target.region ?? home.region ?? '',
    name: target.cluster,
  };
}

/** EKS cluster names: https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateCluster.html */
const CLUSTER_NAME = /^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$/;

/** Why `target` (`name` or `name@region`, the `clusters` syntax) is not one; undefined when it is. */
export function clusterTargetProblem(target: string): string | undefined {
  const [name = '', region, extra] = target.split('@');
  if (!CLUSTER_NAME.test(name) || extra !== undefined) {
    return `"${target}" is not an EKS cluster name (letters, digits, - and _, up to 100), optionally name@region`;
  }
  return region === undefined ? undefined : regionProblem(region);
}
