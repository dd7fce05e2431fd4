// Shared harness of the reliability suite: a world scanned through the live SDK adapters, with
// faults injected where AWS raises them, compared against a fault-free baseline.
import { readFileSync } from 'node:fs';
import { buildFleetWorld } from '../../bench/fleet.js';
import { createWorldSdk, type Interceptor, passThrough } from '../../bench/world-sdk.js';
import { createLiveAwsFacts } from '../../lambda/adapters/aws/aws-facts-adapter.js';
import {
  createIamRolePolicyReader,
  createIamSimulator,
} from '../../lambda/adapters/aws/iam-simulator.js';
import { parseWorld } from '../../lambda/adapters/world/load-world.js';
import type { World } from '../../lambda/adapters/world/schema.js';
import { createWorldObjectSource } from '../../lambda/adapters/world/world-objects.js';
import { createAwsFactsEnricher } from '../../lambda/app/collect-aws-facts.js';
import { createPermissionsEnricher } from '../../lambda/app/collect-permissions.js';
import { collectInventory, evaluateInventory } from '../../lambda/app/run-scan.js';
import type { Inventory } from '../../lambda/core/inventory.js';
import { applyChanges, diffFindings, type FindingState } from '../../lambda/core/lifecycle.js';
import { FINDING_STATUSES, type Finding, SEVERITIES } from '../../lambda/core/model.js';
import type { ScanReport } from '../../lambda/core/report.js';

export const SCAN_TIME = new Date('2026-11-01T00:00:00Z');

export function exampleWorld(): World {
  const file = new URL('../../examples/world.json', import.meta.url);
  return parseWorld(readFileSync(file, 'utf8'), 'examples/world.json');
}

/** The example account plus a small synthetic fleet: failing findings and selector sharing. */
export function reliabilityWorlds(): { readonly name: string; readonly world: World }[] {
  return [
    { name: 'examples/world.json', world: exampleWorld() },
    {
      name: 'fleet 3×6',
      world: parseWorld(
        JSON.stringify(buildFleetWorld({ clusters: 3, nodeClassesPerCluster: 6 }, 11)),
        'fleet'
      ),
    },
  ];
}

export interface ScanOutcome {
  readonly inventory: Inventory;
  readonly report: ScanReport;
}

/** A full world scan (AWS facts + permissions) through the live adapters and `intercept`. */
export async function scanWorld(
  world: World,
  intercept: Interceptor = passThrough
): Promise<ScanOutcome> {
  const sdk = createWorldSdk(world, { now: SCAN_TIME, intercept });
  const { inventory, inputErrors } = await collectInventory({
    objects: createWorldObjectSource({ world, file: 'world.json' }),
    enrichers: [
      createAwsFactsEnricher({ port: createLiveAwsFacts(sdk), now: SCAN_TIME }),
      createPermissionsEnricher({
        simulator: createIamSimulator(sdk.iam),
        // Policies unread (every context value counts); which roles exist is read (GetRole).
        policies: {
          documents: () => Promise.reject(new Error('not read')),
          roleExists: (name) =>
            createIamRolePolicyReader(sdk.iam).roleExists?.(name) ?? Promise.resolve(false),
        },
      }),
    ],
  });
  return { inventory, report: evaluateInventory(inventory, { now: SCAN_TIME }, inputErrors) };
}

/** FNV-1a: a deterministic "random" choice per call, stable across runs. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

export function callKey(operation: string, input: unknown): string {
  return `${operation} ${JSON.stringify(input)}`;
}

/** Keys `cluster/name` of NodeClasses whose collected facts hold an unavailable slice. */
export function degradedNodeClasses(inventory: Inventory): Set<string> {
  const degraded = new Set<string>();
  const hasGap = (value: unknown): boolean => {
    if (value === null || typeof value !== 'object') return false;
    const record = value as Record<string, unknown>;
    if (record.status === 'unavailable') return true;
    if (Array.isArray(value)) return value.some(hasGap);
    return Object.values(record).some(hasGap);
  };
  for (const [key, facts] of inventory.awsFacts) if (hasGap(facts)) degraded.add(key);
  for (const [key, facts] of inventory.permissions) if (hasGap(facts)) degraded.add(key);
  return degraded;
}

export function resourceKey(finding: Pick<Finding, 'resource'>): string {
  return `${finding.resource.cluster}/${finding.resource.name}`;
}

/** What a report must always be, whatever went wrong. */
export function reportProblems(report: ScanReport): string[] {
  const problems: string[] = [];
  const ids = new Set<string>();
  for (const finding of report.findings) {
    if (ids.has(finding.id)) problems.push(`duplicate finding id ${finding.id}`);
    ids.add(finding.id);
    if (!FINDING_STATUSES.includes(finding.status)) problems.push(`bad status ${finding.status}`);
    if (!SEVERITIES.includes(finding.severity)) problems.push(`bad severity ${finding.severity}`);
    if (finding.message.trim() === '') problems.push(`empty message on ${finding.id}`);
  }
  const counted = Object.values(report.summary.byStatus).reduce((sum, count) => sum + count, 0);
  if (counted !== report.findings.length) problems.push('summary.byStatus does not add up');
  if (report.summary.total !== report.findings.length) problems.push('summary.total is wrong');
  JSON.stringify(report);
  return problems;
}

/** Stored state after a scan's findings were all published. */
export function storedAfter(report: ScanReport, clusters: readonly string[]): FindingState[] {
  const diff = diffFindings({
    stored: [],
    findings: report.findings,
    scope: { clusters },
    now: SCAN_TIME,
  });
  return applyChanges([], diff.changes);
}
