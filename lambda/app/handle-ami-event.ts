// `EC2 AMI State Change` → the image → the stored NodeClasses whose selector terms (or last
// resolved AMIs) match it → a scan restricted to those NodeClasses. The event body is not trusted
// beyond the image id and its region: the image is looked up again, in that region (an event is a
// hint, never the state). Events reach the home region's function from every region the scanner
// scans (forwarded by AmiEventForwarder), so the event's `region` decides which clusters count.
import {
  affectedByImage,
  type ImageTermMatcher,
  type NodeClassIndexEntry,
  type NodeClassRef,
} from '../core/event-index.js';
import { parseAmiStateChange } from '../core/events.js';
import type { Image } from '../core/facts/aws.js';
import type { AwsFactsPort } from '../core/ports/aws-facts.js';
import type { AppLogger, FindingStore, ServiceMetrics } from '../core/ports/service.js';
import { ScannerError } from '../shared/errors.js';
import type { ScanRequest, ScanResult } from './scan-and-publish.js';

export interface EventDeps {
  readonly store: Pick<FindingStore, 'loadIndex'>;
  readonly scan: (request: ScanRequest) => Promise<ScanResult>;
  readonly metrics: Pick<ServiceMetrics, 'eventIgnored'>;
  readonly logger: AppLogger;
  /** The function's own region: the region of a stored cluster that names none. */
  readonly homeRegion: string;
}

export interface AmiEventDeps extends EventDeps {
  /** The image lookup of one region (AMIs are regional: an image is looked up where it lives). */
  readonly imagesIn: (region: string) => Pick<AwsFactsPort, 'describeImages'>;
  readonly matches: ImageTermMatcher;
}

export type EventOutcome =
  | { readonly status: 'ignored'; readonly reason: string }
  | { readonly status: 'no-match' }
  | {
      readonly status: 'scanned';
      readonly nodeClasses: readonly NodeClassRef[];
      readonly result: ScanResult;
    };

/** The reference a rescan needs from an index entry. */
export function refOf(entry: NodeClassIndexEntry): NodeClassRef {
  return {
    cluster: entry.cluster,
    name: entry.name,
    ...(entry.region ? { region: entry.region } : {}),
  };
}

/** Drops an event that cannot be used: logged and counted, never retried. */
export function ignoreEvent(deps: EventDeps, reason: string, detail: string): EventOutcome {
  deps.logger.warn('Event ignored', { reason, detail });
  deps.metrics.eventIgnored(reason);
  return { status: 'ignored', reason };
}

/**
 * Runs the restricted scan, one cluster per identity (same-named clusters of two regions are two
 * clusters); throws after publishing when a cluster failed, so the event is retried. A NodeClass
 * indexed twice (an entry of an earlier version beside the current one) is rescanned once.
 */
export async function rescan(
  deps: EventDeps,
  scanId: string,
  trigger: string,
  affected: readonly NodeClassRef[]
): Promise<EventOutcome> {
  // An entry that names no region is in the home region; a ref names a region only outside it.
  const regionOf = (ref: NodeClassRef) => ref.region ?? deps.homeRegion;
  const placed = (ref: NodeClassRef): NodeClassRef => ({
    cluster: ref.cluster,
    name: ref.name,
    ...(regionOf(ref) === deps.homeRegion ? {} : { region: regionOf(ref) }),
  });
  const nodeClasses = [
    ...new Map(
      affected.map(placed).map((ref) => [`${regionOf(ref)}/${ref.cluster}#${ref.name}`, ref])
    ).values(),
  ];
  if (nodeClasses.length === 0) {
    deps.logger.info('No stored NodeClass is affected', { trigger });
    return { status: 'no-match' };
  }
  const clusters = [
    ...new Map(
      nodeClasses.map((ref) => [
        `${ref.cluster}@${regionOf(ref)}`,
        ref.region === undefined
          ? { cluster: ref.cluster }
          : { cluster: ref.cluster, region: ref.region },
      ])
    ),
  ]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, target]) => target);
  const result = await deps.scan({ scanId, trigger, clusters, restrictTo: nodeClasses });
  if (result.failedClusters.length > 0) {
    throw new ScannerError(
      `Rescan after ${trigger} failed for cluster(s) ${result.failedClusters.join(', ')}`
    );
  }
  return { status: 'scanned', nodeClasses, result };
}

export async function handleAmiEvent(deps: AmiEventDeps, raw: unknown): Promise<EventOutcome> {
  const parsed = parseAmiStateChange(raw);
  if (!parsed.ok) return ignoreEvent(deps, parsed.reason, parsed.detail);
  const { ImageId: imageId, State: state } = parsed.value.detail;
  const region = parsed.value.region;
  const trigger = `ami-${state}:${imageId}`;
  const index = await deps.store.loadIndex();
  // AMIs are regional: an image only matters to clusters in the event's region. Clusters of no
  // other region are looked at, and no other region's EC2 is asked.
  const inRegion = index.filter((entry) => (entry.region ?? deps.homeRegion) === region);
  if (inRegion.length === 0) {
    deps.logger.info('No stored NodeClass is in the region of the AMI state change', {
      trigger,
      region,
      indexed: index.length,
    });
    return { status: 'no-match' };
  }
  // Deregistered and disabled images may no longer be listed: then only ids can match.
  const images = await deps.imagesIn(region).describeImages({
    filters: [{ name: 'image-id', values: [imageId] }],
    includeDeprecated: true,
  });
  const image: Image | undefined = images.find((candidate) => candidate.id === imageId);
  const affected = affectedByImage(
    inRegion,
    imageId,
    image,
    deps.matches,
    parsed.value.account
  ).map(refOf);
  deps.logger.info('AMI state change', {
    imageId,
    state,
    region,
    imageListed: image !== undefined,
    indexed: index.length,
    affected: affected.length,
  });
  return rescan(deps, `ami-${parsed.value.id}`, trigger, affected);
}
