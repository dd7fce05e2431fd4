// The scan deadline: the moment past which a scan stops reading (AWS and Kubernetes) so that it
// still has time to evaluate, store and publish. It travels with the scan's async context, not
// through every call: SDK clients are shared by the scans of a warm Lambda, and each scan (and
// only its reads, never the writes that follow) must see its own deadline.
import { AsyncLocalStorage } from 'node:async_hooks';

export interface ScanDeadline {
  /** `Date.now()` value past which reads fail at once. */
  readonly at: number;
  /** What set it, for error messages: `the scan deadline of 300000 ms (NODECLASS_SCAN_DEADLINE_MS)`. */
  readonly label: string;
}

/** The CLI's time for a whole scan when `NODECLASS_SCAN_DEADLINE_MS` does not set one. */
export const DEFAULT_CLI_SCAN_DEADLINE_MS = 5 * 60_000;

/**
 * Caps the reading time of a scan: the CLI's whole run, or a Lambda request's (below the
 * invocation's own limit).
 */
export const SCAN_DEADLINE_ENV = 'NODECLASS_SCAN_DEADLINE_MS';

/**
 * What a Lambda keeps back from its remaining time to evaluate, store and publish: a fifth of it,
 * at least 10 s and at most 2 minutes (12 of a 15-minute invocation's minutes go to reading).
 */
export function lambdaReadBudgetMs(remainingMs: number, capMs = Number.POSITIVE_INFINITY): number {
  const reserve = Math.min(120_000, Math.max(10_000, remainingMs * 0.2));
  return Math.min(Math.max(0, remainingMs - reserve), capMs);
}

/**
 * A cluster's share of its request's reading time: what is left of it, split evenly among the
 * clusters still to read. A cluster that hangs until its share runs out leaves the clusters after
 * it their own share, and the request's reserve (after `request.at`) is never touched.
 */
export function clusterReadDeadline(
  request: ScanDeadline,
  clustersLeft: number,
  now = Date.now()
): ScanDeadline {
  if (clustersLeft <= 1) return request;
  const leftMs = Math.max(0, request.at - now);
  const shareMs = Math.floor(leftMs / clustersLeft);
  return {
    at: now + shareMs,
    label: `${request.label}, of which this cluster had ${shareMs} ms (${leftMs} ms left for ${clustersLeft} clusters)`,
  };
}

export function deadlineAfter(ms: number, label: string, now = Date.now()): ScanDeadline {
  return { at: now + ms, label };
}

const current = new AsyncLocalStorage<ScanDeadline | undefined>();

/** Runs `run` with `deadline` as the scan deadline of every read it starts (none: no deadline). */
export function withScanDeadline<T>(deadline: ScanDeadline | undefined, run: () => T): T {
  return current.run(deadline, run);
}

/** The deadline of the scan this code runs for, if it has one. */
export function currentScanDeadline(): ScanDeadline | undefined {
  return current.getStore();
}

/**
 * A read refused or abandoned at the scan deadline. Its name is not one the AWS SDK retries; the
 * AWS and Kubernetes classifiers read it as a timeout.
 */
export class ScanDeadlineError extends Error {
  public constructor(what: string, deadline: ScanDeadline) {
    super(`${what} was abandoned at ${deadline.label}`);
    this.name = 'ScanDeadlineExceeded';
  }
}
