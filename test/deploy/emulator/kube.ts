// One TLS Kubernetes API server per world cluster (certificate from a CA made for the test),
// answering the reads the scanner makes from the world file. Clusters are told apart by region and
// name (`kubeEndpointKey`): two regions may each hold a cluster of one name. Every request must carry an EKS
// bearer token: a presigned STS GetCallerIdentity URL (60 s, `x-k8s-aws-id` signed) whose
// credential belongs to a principal with an access entry in that cluster.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { WorldCluster } from '../../../lambda/adapters/world/schema.js';
import type { TestPki } from '../../adapters/kube/tls-fixtures.js';

/** The key of a cluster's endpoint: `<region>/<name>`. */
export function kubeEndpointKey(region: string, name: string): string {
  return `${region}/${name}`;
}

export interface KubeRequest {
  readonly cluster: string;
  readonly region: string;
  readonly path: string;
  readonly principalArn?: string;
  /** The HTTP status answered; 0 for a request left unanswered (a `hang` fault). */
  readonly status: number;
}

/**
 * What a faulted path answers instead of the world's objects: an HTTP status (a number: every
 * request), a status with headers (`Retry-After`), or no answer at all (`hang`: the client's
 * timeouts end it). `times` limits it to the first requests (1: one-shot), then the path answers.
 */
export type KubeFault =
  | number
  | {
      readonly status: number;
      readonly headers?: Readonly<Record<string, string>>;
      readonly times?: number;
    }
  | { readonly hang: true; readonly times?: number };

/** Per-cluster knobs, by cluster name (in every region): faults by request path. */
export type KubeFaults = Map<string, Map<string, KubeFault>>;

export interface KubeEmulator {
  /** Each cluster's endpoint, by `kubeEndpointKey(region, name)`. */
  readonly endpoints: ReadonlyMap<string, string>;
  readonly requests: KubeRequest[];
  readonly faults: KubeFaults;
  /**
   * Serve these clusters' objects from now on (same names, same endpoints), those of the home
   * region unless `region` says another.
   */
  setClusters(clusters: readonly WorldCluster[], region?: string): void;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function statusBody(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message };
}

/** The Status reason the API server gives with a code (metav1.StatusReason). */
function reasonOf(code: number): string {
  if (code === 401) return 'Unauthorized';
  if (code === 403) return 'Forbidden';
  if (code === 404) return 'NotFound';
  if (code === 429) return 'TooManyRequests';
  if (code === 503) return 'ServiceUnavailable';
  if (code === 504) return 'Timeout';
  return 'InternalError';
}

/** The principal a bearer token was presigned for, or why it is not a valid EKS token. */
function tokenPrincipal(
  authorization: string | undefined,
  principalsByAccessKey: ReadonlyMap<string, string>
): { principalArn: string } | { problem: string } {
  const token = authorization?.match(/^Bearer k8s-aws-v1\.([A-Za-z0-9_-]+)$/)?.[1];
  if (token === undefined) return { problem: 'no k8s-aws-v1 bearer token' };
  let url: URL;
  try {
    url = new URL(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    return { problem: 'token is not a presigned URL' };
  }
  const query = url.searchParams;
  if (!/^sts(\.[a-z0-9-]+)?\.amazonaws\.com$/.test(url.hostname))
    return { problem: `token presigned for ${url.hostname}, not STS` };
  if (query.get('Action') !== 'GetCallerIdentity') return { problem: 'not GetCallerIdentity' };
  if (Number(query.get('X-Amz-Expires')) > 60) return { problem: 'token valid for over 60 s' };
  if (!(query.get('X-Amz-SignedHeaders') ?? '').split(';').includes('x-k8s-aws-id'))
    return { problem: 'x-k8s-aws-id is not signed' };
  const accessKey = (query.get('X-Amz-Credential') ?? '').split('/')[0] ?? '';
  const principalArn = principalsByAccessKey.get(accessKey);
  return principalArn === undefined
    ? { problem: `unknown access key ${accessKey}` }
    : { principalArn };
}

function karpenterObjects(cluster: WorldCluster) {
  const kube = cluster.kubernetes;
  const namespace = kube?.karpenterNamespace ?? 'kube-system';
  const serviceAccount = kube?.karpenterServiceAccount ?? 'karpenter';
  const deployment = {
    metadata: { name: 'karpenter', namespace, labels: { 'app.kubernetes.io/name': 'karpenter' } },
    spec: {
      template: {
        spec: {
          serviceAccountName: serviceAccount,
          containers: [
            {
              name: 'controller',
              image: `public.ecr.aws/karpenter/controller:${kube?.karpenterVersion ?? '1.6.2'}`,
              env: [{ name: 'CLUSTER_NAME', value: cluster.name }],
            },
          ],
        },
      },
    },
  };
  return { deployment, namespace };
}

function answer(cluster: WorldCluster, url: URL, res: ServerResponse): number {
  const kube = cluster.kubernetes;
  const { deployment } = karpenterObjects(cluster);
  const list = (items: readonly unknown[]) => {
    send(res, 200, { kind: 'List', apiVersion: 'v1', metadata: {}, items });
    return 200;
  };
  if (url.pathname === '/apis/karpenter.k8s.aws/v1/ec2nodeclasses')
    return list(kube?.ec2NodeClasses ?? []);
  if (url.pathname === '/apis/karpenter.sh/v1/nodepools') return list(kube?.nodePools ?? []);
  if (url.pathname === '/apis/apps/v1/deployments') return list(kube ? [deployment] : []);
  // Karpenter's CRDs, when the world records them (`kubernetes.crds`); 404 otherwise.
  const crd = url.pathname.match(
    /^\/apis\/apiextensions\.k8s\.io\/v1\/customresourcedefinitions\/([^/]+)$/
  );
  const installed = kube?.crds?.find((document) => document.metadata.name === crd?.[1]);
  if (installed) {
    send(res, 200, installed);
    return 200;
  }
  const account = url.pathname.match(/^\/api\/v1\/namespaces\/([^/]+)\/serviceaccounts\/([^/]+)$/);
  if (account) {
    const [, namespace, name] = account;
    const found = kube?.serviceAccounts.find(
      (entry) => entry.namespace === namespace && entry.name === name
    );
    if (found) {
      send(res, 200, { metadata: { name, namespace, annotations: found.annotations ?? {} } });
      return 200;
    }
  }
  send(res, 404, statusBody(404, 'NotFound', `${url.pathname} not found`));
  return 404;
}

export async function startKubeEmulator(options: {
  readonly pki: TestPki;
  /** The home region and its clusters. */
  readonly region: string;
  readonly clusters: readonly WorldCluster[];
  /** Clusters of other regions, by region. */
  readonly otherRegions?: ReadonlyMap<string, readonly WorldCluster[]>;
  /** Principals allowed per cluster (access entries), by cluster name and region. */
  readonly accessEntries: (cluster: string, region: string) => readonly string[];
  readonly principalsByAccessKey: ReadonlyMap<string, string>;
}): Promise<KubeEmulator> {
  const requests: KubeRequest[] = [];
  const faults: KubeFaults = new Map();
  // Requests each limited fault (`times`) has failed so far.
  const served = new WeakMap<object, number>();
  const activeFault = (cluster: string, path: string) => {
    const fault = faults.get(cluster)?.get(path);
    if (fault === undefined || typeof fault === 'number' || fault.times === undefined) return fault;
    const count = served.get(fault) ?? 0;
    if (count >= fault.times) return undefined;
    served.set(fault, count + 1);
    return fault;
  };
  const servers: Server[] = [];
  const endpoints = new Map<string, string>();
  const placed = [
    ...options.clusters.map((cluster) => ({ region: options.region, cluster })),
    ...[...(options.otherRegions ?? [])].flatMap(([region, clusters]) =>
      clusters.map((cluster) => ({ region, cluster }))
    ),
  ];
  const current = new Map(
    placed.map(({ region, cluster }) => [kubeEndpointKey(region, cluster.name), cluster])
  );
  for (const { region, cluster: served } of placed) {
    const key = kubeEndpointKey(region, served.name);
    const server = createServer(
      { key: options.pki.serverKeyPem, cert: options.pki.serverCertPem },
      (req: IncomingMessage, res: ServerResponse) => {
        const cluster = current.get(key) as WorldCluster;
        const url = new URL(req.url ?? '/', 'https://127.0.0.1');
        const identity = tokenPrincipal(req.headers.authorization, options.principalsByAccessKey);
        const record = (status: number, principalArn?: string) =>
          requests.push({
            cluster: cluster.name,
            region,
            path: url.pathname,
            status,
            ...(principalArn ? { principalArn } : {}),
          });
        if ('problem' in identity) {
          send(res, 401, statusBody(401, 'Unauthorized', identity.problem));
          record(401);
          return;
        }
        if (!options.accessEntries(cluster.name, region).includes(identity.principalArn)) {
          send(res, 401, statusBody(401, 'Unauthorized', 'no access entry for the principal'));
          record(401, identity.principalArn);
          return;
        }
        const injected = activeFault(cluster.name, url.pathname);
        if (injected !== undefined && typeof injected === 'object' && 'hang' in injected) {
          // Never answered (status 0 in the log): the client gives up, or close() drops it.
          record(0, identity.principalArn);
          return;
        }
        if (injected !== undefined) {
          const { status, headers = {} } =
            typeof injected === 'number' ? { status: injected } : injected;
          res
            .writeHead(status, { ...headers, 'content-type': 'application/json' })
            .end(JSON.stringify(statusBody(status, reasonOf(status), `${url.pathname}: injected`)));
          record(status, identity.principalArn);
          return;
        }
        record(answer(cluster, url, res), identity.principalArn);
      }
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    endpoints.set(key, `https://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }
  return {
    endpoints,
    requests,
    faults,
    setClusters: (clusters, region = options.region) => {
      for (const cluster of clusters) current.set(kubeEndpointKey(region, cluster.name), cluster);
    },
    close: async () => {
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.closeAllConnections();
              server.close(() => resolve());
            })
        )
      );
    },
  };
}
