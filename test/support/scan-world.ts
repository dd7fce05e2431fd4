// A fake fleet for the scan path: clusters and their raw Karpenter objects, editable between scans,
// served through the plan factory scanAndPublish takes.
import type { ScanPlan } from '../../lambda/app/run-scan.js';
import type { PlanFactory, ScanAndPublishDeps } from '../../lambda/app/scan-and-publish.js';
import { diffFindings } from '../../lambda/core/lifecycle.js';
import { renderSummary } from '../../lambda/core/notify/summary.js';
import type { FindingStore, NotificationPublisher } from '../../lambda/core/ports/service.js';
import { aNodeClassEntry, aNodeClassObject } from './builders.js';
import { aFinding } from './findings.js';
import { aNodePoolEntry } from './nodepool-builders.js';
import { RecordingMetrics, silentLogger } from './service-fakes.js';

/** Clusters and their EC2NodeClass/NodePool objects. */
export type ScanWorld = Map<string, Record<string, unknown>[]>;

export const ARN_PROFILE = 'arn:aws:iam::111122223333:instance-profile/KarpenterNodeProfile';

/** A NodeClass whose instance profile is an ARN: `instance-profile-is-name` fails. */
export const brokenNodeClass = (name = 'default') =>
  aNodeClassObject({ name, spec: { role: undefined, instanceProfile: ARN_PROFILE } });

/** The same NodeClass with the profile given by name: the check passes. */
export const fixedNodeClass = (name = 'default') =>
  aNodeClassObject({ name, spec: { role: undefined, instanceProfile: 'KarpenterNodeProfile' } });

export interface PlanOptions {
  /** Clusters whose objects cannot be read (the load throws). */
  readonly unreachable?: (cluster: string) => boolean;
  /** Runs when a cluster's objects are read (before `unreachable` is asked). */
  readonly onLoad?: (cluster: string) => void;
}

export function planFactoryOf(world: ScanWorld, options: PlanOptions = {}): PlanFactory {
  return ({ cluster }): ScanPlan => ({
    objects: {
      load: async () => {
        options.onLoad?.(cluster);
        if (options.unreachable?.(cluster)) throw new Error(`cluster ${cluster} unreachable`);
        const objects = world.get(cluster) ?? [];
        return {
          clusters: [{ name: cluster, partition: 'aws' }],
          nodeClasses: objects
            .filter((raw) => raw.kind !== 'NodePool')
            .map((raw) => aNodeClassEntry(raw, cluster)),
          nodePools: objects
            .filter((raw) => raw.kind === 'NodePool')
            .map((raw) => aNodePoolEntry(raw, cluster)),
          inputs: [],
          inputErrors: [],
        };
      },
    },
  });
}

/** One scheduled scan of the cluster `prod`. */
export const prodSchedule = (scanId: string) => ({
  scanId,
  trigger: 'schedule',
  clusters: [{ cluster: 'prod' }],
});

/** scanAndPublish's dependencies for `world` at `at`, account 111122223333 in eu-west-1, no digest. */
export function scanDepsOf(
  world: ScanWorld,
  store: FindingStore,
  publisher: NotificationPublisher,
  at: Date
): ScanAndPublishDeps {
  return {
    planFor: planFactoryOf(world),
    store,
    publisher,
    metrics: new RecordingMetrics(),
    logger: silentLogger,
    clock: () => at,
    settings: {
      reminderIntervalMs: 24 * 3_600_000,
      digest: 'never',
      account: '111122223333',
      region: 'eu-west-1',
    },
  };
}

/** The first sightings of `count` failing NodeClasses of `prod` at `now`, and their one summary. */
export function firstScanOf(count: number, now: Date) {
  const findings = Array.from({ length: count }, (_, i) =>
    aFinding({ resource: { name: `class-${i}` } })
  );
  const { changes } = diffFindings({ stored: [], findings, scope: { clusters: ['prod'] }, now });
  const message = renderSummary({
    cluster: 'prod',
    scanSeq: 1,
    location: { account: '111122223333', region: 'eu-west-1' },
    changes,
    firstScan: true,
  });
  return { changes, message };
}
