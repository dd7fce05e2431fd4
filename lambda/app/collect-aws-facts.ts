// Enricher `aws`: resolves every NodeClass's selectors against AWS the way Karpenter does, through
// an AwsFactsPort memoised for the scan (identical queries across NodeClasses and clusters are
// issued once). A source that cannot be read becomes an `unavailable` slice for exactly the facts
// that needed it; the rest of the scan completes.
import { aliasParameters, parseAlias, unsupportedAliasMessage } from '../core/ami/alias.js';
import {
  aliasImageQuery,
  applyStateFilters,
  type ImageQueryPlan,
  imageQueriesForTerms,
  withoutStateFilter,
} from '../core/ami/queries.js';
import { selectImages } from '../core/ami/select.js';
import {
  outsideScopeMessage,
  parameterInScope,
  type SsmParameterScope,
} from '../core/ami/ssm-scope.js';
import type {
  AliasResolution,
  AmiFacts,
  AwsNodeClassFacts,
  CapacityReservationFacts,
  EbsEncryptionDefaults,
  EbsKeyFacts,
  EbsKeyReadout,
  Image,
  ImageSelection,
  InstanceProfileFacts,
  InstanceTypeFacts,
  InstanceTypeOfferingFacts,
  NodeRoleFacts,
  SecurityGroupFacts,
  SsmParameterTermLookup,
  SubnetFacts,
} from '../core/facts/aws.js';
import { ok, type Slice, unavailable } from '../core/facts/slice.js';
import { bareIamName } from '../core/iam/arns.js';
import { nodeClassesLaunchedThrough } from '../core/instance-types.js';
import {
  type ClusterContext,
  clusterOf,
  factsKeyOf,
  type Inventory,
  nodeClassKey,
} from '../core/inventory.js';
import { ebsKeyUsesOf, mayUseDefaultKey } from '../core/kms/ebs-key-uses.js';
import { namesAwsManagedEbsAlias } from '../core/kms/launch-access.js';
import type { AwsFactsPort } from '../core/ports/aws-facts.js';
import type { InventoryEnricher } from '../core/ports/objects.js';
import type { EC2NodeClassSpec } from '../core/schema.js';
import { capacityReservationQueries } from '../core/selectors/capacity-reservations.js';
import { securityGroupQueries } from '../core/selectors/security-groups.js';
import { sortSubnets, subnetQueries } from '../core/selectors/subnets.js';
import { SourceUnavailableError } from '../shared/errors.js';
import { memoizeAwsFactsPort } from './memoize-port.js';

export interface AwsFactsEnricherOptions {
  readonly port: AwsFactsPort;
  /** Scan time: Karpenter's selection prefers images whose DeprecationTime is still ahead. */
  readonly now: Date;
  /** AWS calls in flight at once (default 8). */
  readonly concurrency?: number;
  /**
   * Custom SSM parameters the scanner may read (public /aws/service/ ones always). A term naming
   * any other is an `access-denied` lookup, and SSM is not called. Absent: every parameter.
   */
  readonly ssmParameterScope?: SsmParameterScope;
}

function unavailableFrom<T>(error: unknown, context?: string): Slice<T> {
  const prefix = context ? `${context}: ` : '';
  if (error instanceof SourceUnavailableError) {
    return unavailable(error.reason, `${prefix}${error.message}`);
  }
  return unavailable(
    'unknown',
    `${prefix}${error instanceof Error ? error.message : String(error)}`
  );
}

async function attempt<T>(read: () => Promise<T>, context?: string): Promise<Slice<T>> {
  try {
    return ok(await read());
  } catch (error) {
    return unavailableFrom(error, context);
  }
}

function kubernetesVersionOf(cluster: ClusterContext): Slice<string> {
  const label = cluster.name === '' ? 'the cluster' : `cluster "${cluster.name}"`;
  if (cluster.aws?.status === 'unavailable') {
    return unavailable(
      cluster.aws.reason,
      `Kubernetes version of ${label} unknown (${cluster.aws.message}); alias terms cannot be resolved.`
    );
  }
  const version = cluster.aws?.value.kubernetesVersion;
  if (version === undefined) {
    // No cluster is read for manifests (`scan --aws paths…`): only the flag can supply the version.
    const why =
      cluster.name === ''
        ? 'no cluster is read for manifests; give --kubernetes-version'
        : 'EKS DescribeCluster not read';
    return unavailable(
      'unknown',
      `Kubernetes version of ${label} unknown (${why}); alias terms cannot be resolved.`
    );
  }
  return ok(version);
}

/** One query's answer without its state filter (it contains the filtered answer). */
interface FetchedPlan {
  readonly plan: ImageQueryPlan;
  readonly unfiltered: readonly Image[];
}

/** Karpenter's selection over each plan's images, as `query` (the plan's, or its stateless form) lists them. */
function selectionOf(
  fetched: readonly FetchedPlan[],
  now: Date,
  withState: boolean
): ImageSelection {
  const queries = fetched.map(({ plan, unfiltered }) => {
    const query = withState ? plan.query : withoutStateFilter(plan.query);
    const images = withState ? applyStateFilters(unfiltered, plan.query) : [...unfiltered];
    const group = { images, ...(plan.knownVariants ? { knownVariants: plan.knownVariants } : {}) };
    return {
      group,
      query,
      termIndexes: plan.termIndexes,
      images,
      selected: selectImages([group], now),
    };
  });
  const ids = new Set(queries.flatMap((result) => result.images.map((image) => image.id)));
  return {
    queries: queries.map(({ query, termIndexes, images, selected }) => ({
      query,
      termIndexes,
      images,
      selected,
    })),
    matchCount: ids.size,
    selected: selectImages(
      queries.map(({ group }) => group),
      now
    ),
  };
}

/**
 * Both selections (as Karpenter queries, and ignoring image state) from one DescribeImages per
 * plan: the query without its state filter, the state filtered locally.
 */
async function runQueries(
  plans: readonly ImageQueryPlan[],
  port: AwsFactsPort,
  now: Date
): Promise<Pick<AmiFacts, 'available' | 'ignoringState'>> {
  const fetched = await attempt(() =>
    Promise.all(
      plans.map(
        async (plan): Promise<FetchedPlan> => ({
          plan,
          unfiltered: await port.describeImages(withoutStateFilter(plan.query)),
        })
      )
    )
  );
  if (fetched.status === 'unavailable') return { available: fetched, ignoringState: fetched };
  return {
    available: ok(selectionOf(fetched.value, now, true)),
    ignoringState: ok(selectionOf(fetched.value, now, false)),
  };
}

async function resolveAlias(
  aliasText: string,
  termIndex: number,
  cluster: ClusterContext,
  port: AwsFactsPort
): Promise<Slice<{ resolution: AliasResolution; plans: ImageQueryPlan[] }>> {
  const kubernetesVersion = kubernetesVersionOf(cluster);
  if (kubernetesVersion.status === 'unavailable') return kubernetesVersion;
  const k8s = kubernetesVersion.value;
  const alias = parseAlias(aliasText);
  if (alias === undefined) {
    const resolution: AliasResolution = {
      alias: aliasText,
      family: aliasText.split('@')[0] ?? aliasText,
      version: aliasText.split('@')[1] ?? '',
      kubernetesVersion: k8s,
      unsupported: `"${aliasText}" is not family@version with a supported family`,
      parameters: [],
    };
    return ok({ resolution, plans: [] });
  }
  const base = {
    alias: aliasText,
    family: alias.family,
    version: alias.version,
    kubernetesVersion: k8s,
  };
  const refusal = unsupportedAliasMessage(alias, k8s);
  if (refusal !== undefined) {
    return ok({ resolution: { ...base, unsupported: refusal, parameters: [] }, plans: [] });
  }
  const parameters = await Promise.all(
    aliasParameters(alias, k8s).map(async (parameter) => ({
      ...parameter,
      value: await attempt(() => port.getParameter(parameter.name), `SSM ${parameter.name}`),
    }))
  );
  const resolved = parameters.flatMap((parameter) =>
    parameter.value.status === 'ok' && parameter.value.value !== undefined
      ? [{ imageId: parameter.value.value, variants: parameter.variants }]
      : []
  );
  const plan = aliasImageQuery(resolved, termIndex);
  return ok({ resolution: { ...base, parameters }, plans: plan ? [plan] : [] });
}

async function collectAmis(
  spec: EC2NodeClassSpec,
  cluster: ClusterContext,
  port: AwsFactsPort,
  now: Date,
  ssmScope: SsmParameterScope | undefined
): Promise<Slice<AmiFacts>> {
  const terms = spec.amiSelectorTerms;
  const aliasIndex = terms.findIndex((term) => term.alias);
  let alias: AliasResolution | undefined;
  let plans: ImageQueryPlan[];
  const ssmParameters: SsmParameterTermLookup[] = [];
  if (aliasIndex >= 0) {
    // Karpenter uses the alias alone (CEL forbids combining it with other terms).
    const resolved = await resolveAlias(terms[aliasIndex]?.alias ?? '', aliasIndex, cluster, port);
    if (resolved.status === 'unavailable') return resolved;
    alias = resolved.value.resolution;
    plans = resolved.value.plans;
  } else {
    const lookups = await Promise.all(
      terms.map(async (term, termIndex) => {
        if (term.id || !term.ssmParameter) return undefined;
        const name = term.ssmParameter;
        // Outside the scope: not even asked (whether it exists is not the scanner's to learn).
        const value: Slice<string | undefined> =
          ssmScope !== undefined && !parameterInScope(name, ssmScope)
            ? unavailable('access-denied', outsideScopeMessage(name, ssmScope))
            : await attempt(() => port.getParameter(name), `SSM ${name}`);
        return { termIndex, name, value };
      })
    );
    const values = new Map<number, string>();
    for (const lookup of lookups) {
      if (lookup === undefined) continue;
      ssmParameters.push(lookup);
      if (lookup.value.status === 'ok' && lookup.value.value !== undefined) {
        values.set(lookup.termIndex, lookup.value.value);
      }
    }
    plans = imageQueriesForTerms(terms, values);
  }
  const { available, ignoringState } = await runQueries(plans, port, now);
  return ok({ ...(alias ? { alias } : {}), ssmParameters, available, ignoringState });
}

async function collectSubnets(
  spec: EC2NodeClassSpec,
  port: AwsFactsPort
): Promise<Slice<SubnetFacts>> {
  const queries = subnetQueries(spec.subnetSelectorTerms);
  return attempt(async () => {
    const results = await Promise.all(queries.map((query) => port.describeSubnets(query)));
    const byId = new Map(results.flat().map((subnet) => [subnet.id, subnet]));
    return { queries, subnets: sortSubnets([...byId.values()]) };
  });
}

async function collectSecurityGroups(
  spec: EC2NodeClassSpec,
  port: AwsFactsPort
): Promise<Slice<SecurityGroupFacts>> {
  const queries = securityGroupQueries(spec.securityGroupSelectorTerms);
  return attempt(async () => {
    const results = await Promise.all(queries.map((query) => port.describeSecurityGroups(query)));
    const byId = new Map(results.flat().map((group) => [group.id, group]));
    return {
      queries,
      securityGroups: [...byId.values()].sort((a, b) => a.id.localeCompare(b.id)),
    };
  });
}

async function collectCapacityReservations(
  spec: EC2NodeClassSpec,
  port: AwsFactsPort
): Promise<Slice<CapacityReservationFacts> | undefined> {
  const terms = spec.capacityReservationSelectorTerms ?? [];
  if (terms.length === 0) return undefined;
  const queries = capacityReservationQueries(terms);
  return attempt(async () => {
    const results = await Promise.all(
      queries.map((query) => port.describeCapacityReservations(query))
    );
    const byId = new Map(results.flat().map((reservation) => [reservation.id, reservation]));
    return { queries, reservations: [...byId.values()] };
  });
}

async function collectRole(
  source: NodeRoleFacts['source'],
  name: string,
  port: AwsFactsPort
): Promise<Slice<NodeRoleFacts>> {
  const role = await attempt(() => port.getRole(name), `IAM role ${name}`);
  if (role.status === 'unavailable') return role;
  return ok({ source, name, ...(role.value ? { role: role.value } : {}) });
}

async function collectIdentity(
  spec: EC2NodeClassSpec,
  port: AwsFactsPort
): Promise<Pick<AwsNodeClassFacts, 'instanceProfile' | 'nodeRole'>> {
  if (spec.instanceProfile !== undefined) {
    const name = bareIamName(spec.instanceProfile);
    const read = await attempt(() => port.getInstanceProfile(name), `IAM instance profile ${name}`);
    if (read.status === 'unavailable') return { instanceProfile: read, nodeRole: read };
    const instanceProfile: Slice<InstanceProfileFacts> = ok({
      name,
      ...(read.value ? { profile: read.value } : {}),
    });
    const roleName = read.value?.roleNames[0];
    if (roleName === undefined) {
      return { instanceProfile, nodeRole: ok({ source: 'instance-profile' }) };
    }
    return { instanceProfile, nodeRole: await collectRole('instance-profile', roleName, port) };
  }
  if (spec.role !== undefined) {
    return { nodeRole: await collectRole('spec.role', bareIamName(spec.role), port) };
  }
  return {};
}

/**
 * The KMS keys the class's volumes use: the region's EBS encryption settings (read once per scan)
 * when a volume may take the default key, then each customer key once (AWS managed alias/aws/ebs
 * needs no read). Absent when the port reads no EBS encryption facts.
 */
async function collectEbsKeys(
  spec: EC2NodeClassSpec,
  port: AwsFactsPort
): Promise<Slice<EbsKeyFacts> | undefined> {
  const { getEbsEncryptionDefaults, describeKmsKey } = port;
  if (getEbsEncryptionDefaults === undefined && describeKmsKey === undefined) return undefined;
  const uses = ebsKeyUsesOf(spec);
  let defaults: Slice<EbsEncryptionDefaults> | undefined;
  if (mayUseDefaultKey(uses) && getEbsEncryptionDefaults !== undefined) {
    const read = await attempt(() => getEbsEncryptionDefaults.call(port));
    defaults =
      read.status === 'ok' && read.value === undefined
        ? undefined
        : (read as Slice<EbsEncryptionDefaults>);
  }
  const references = new Set(uses.explicit.keys());
  if (defaults?.status === 'ok') {
    const { encryptedByDefault, defaultKmsKeyId } = defaults.value;
    if (
      uses.defaultKey.length > 0 ||
      (encryptedByDefault && uses.defaultKeyIfEncryptedByDefault.length > 0)
    )
      references.add(defaultKmsKeyId);
  }
  const keys: EbsKeyReadout[] = await Promise.all(
    [...references]
      .filter((reference) => !namesAwsManagedEbsAlias(reference))
      .map(async (reference) => ({
        reference,
        lookup:
          describeKmsKey === undefined
            ? unavailable<undefined>(
                'unknown',
                `KMS key ${reference} was not read (no KMS client for this scan).`
              )
            : await attempt(() => describeKmsKey.call(port, reference), `KMS key ${reference}`),
      }))
  );
  return ok({ ...(defaults === undefined ? {} : { defaults }), keys });
}

/** Every AWS fact one NodeClass's checks need. Never throws. */
async function collectNodeClassFacts(
  spec: EC2NodeClassSpec,
  cluster: ClusterContext,
  port: AwsFactsPort,
  now: Date,
  ssmScope?: SsmParameterScope
): Promise<AwsNodeClassFacts> {
  const [amis, subnets, securityGroups, capacityReservations, identity, ebsKeys] =
    await Promise.all([
      collectAmis(spec, cluster, port, now, ssmScope).catch((error: unknown) =>
        unavailableFrom<AmiFacts>(error)
      ),
      collectSubnets(spec, port),
      collectSecurityGroups(spec, port),
      collectCapacityReservations(spec, port),
      collectIdentity(spec, port),
      collectEbsKeys(spec, port),
    ]);
  return {
    amis,
    subnets,
    securityGroups,
    ...(capacityReservations ? { capacityReservations } : {}),
    ...identity,
    ...(ebsKeys === undefined ? {} : { ebsKeys }),
  };
}

/**
 * The region's instance types and their zone offerings (one memoised query each serves every
 * NodeClass); a fact the source does not record is left out.
 */
async function collectInstanceTypes(
  port: AwsFactsPort
): Promise<Pick<AwsNodeClassFacts, 'instanceTypes' | 'instanceTypeOfferings'>> {
  const [types, offerings] = await Promise.all([
    attempt(() => port.describeInstanceTypes()),
    attempt(() => port.describeInstanceTypeOfferings()),
  ]);
  const instanceTypes: Slice<InstanceTypeFacts> | undefined =
    types.status === 'unavailable'
      ? types
      : types.value === undefined
        ? undefined
        : ok({ types: types.value });
  const instanceTypeOfferings: Slice<InstanceTypeOfferingFacts> | undefined =
    offerings.status === 'unavailable'
      ? offerings
      : offerings.value === undefined
        ? undefined
        : ok({ offerings: offerings.value });
  return {
    ...(instanceTypes ? { instanceTypes } : {}),
    ...(instanceTypeOfferings ? { instanceTypeOfferings } : {}),
  };
}

/** The `aws` enricher. Each `enrich` call is one scan with its own memo. */
export function createAwsFactsEnricher(options: AwsFactsEnricherOptions): InventoryEnricher {
  return {
    input: 'aws',
    async enrich(inventory: Inventory): Promise<Inventory> {
      const port = memoizeAwsFactsPort(options.port, {
        ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      });
      const launchedThrough = nodeClassesLaunchedThrough(inventory);
      const collected = await Promise.all(
        inventory.nodeClasses.map(async (entry) => {
          if (!entry.parsed.ok) return undefined;
          const cluster = clusterOf(inventory, entry.cluster) ?? {
            name: entry.cluster,
            partition: 'aws' as const,
          };
          const facts = await collectNodeClassFacts(
            entry.parsed.value.spec,
            cluster,
            port,
            options.now,
            options.ssmParameterScope
          );
          const key = factsKeyOf(entry);
          // Only for classes a NodePool launches through: region-wide queries, read once.
          const instanceTypes = launchedThrough.has(nodeClassKey(entry.cluster, entry.name))
            ? await collectInstanceTypes(port)
            : {};
          return [key, { ...facts, ...instanceTypes }] as const;
        })
      );
      const awsFacts = new Map(inventory.awsFacts);
      for (const item of collected) if (item) awsFacts.set(item[0], item[1]);
      return { ...inventory, inputs: new Set([...inventory.inputs, 'aws']), awsFacts };
    },
  };
}
