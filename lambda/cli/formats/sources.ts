import { nodeClassRef, nodePoolRef } from '../../core/check.js';
import type { Inventory, SourceLocation } from '../../core/inventory.js';
import { type Finding, type ResourceRef, resourceKey } from '../../core/model.js';

/** Where each scanned object came from, so formats can point findings at a file and line. */
export type SourceIndex = ReadonlyMap<string, SourceLocation>;

/** The file name the manifest reader gives standard input (`-`). */
export const STDIN_FILE = '<stdin>';

/**
 * Indexes the sources of the inventory's objects by resource, origin included: same-named
 * manifest objects carry their origin, so each finding points at its own object.
 */
export function sourceIndexOf(inventory: Inventory): SourceIndex {
  const index = new Map<string, SourceLocation>();
  const add = (resource: ResourceRef, source: SourceLocation | undefined) => {
    const key = resourceKey(resource);
    if (source && !index.has(key)) index.set(key, source);
  };
  for (const entry of inventory.nodeClasses) add(nodeClassRef(entry), entry.source);
  for (const entry of inventory.nodePools) add(nodePoolRef(entry), entry.source);
  return index;
}

export function sourceOf(sources: SourceIndex, finding: Finding): SourceLocation | undefined {
  return sources.get(resourceKey(finding.resource));
}

/** `spec.a[0].b` → `spec.a[0]` → `spec.a` → `spec` → `` (the object itself). */
export function parentPath(path: string): string | undefined {
  if (path === '') return undefined;
  const cut = Math.max(path.lastIndexOf('.'), path.lastIndexOf('['));
  return cut <= 0 ? '' : path.slice(0, cut);
}

export interface SourcePosition {
  readonly line: number;
  readonly column: number;
}

/**
 * The position of `path` in the source, else of its nearest parent, else the object's first line.
 * Undefined when the source recorded no positions (e.g. objects read from a cluster).
 */
export function positionOf(
  source: SourceLocation,
  path: string | undefined
): SourcePosition | undefined {
  const positions = source.positions;
  if (!positions) return undefined;
  for (let candidate = path; candidate !== undefined; candidate = parentPath(candidate)) {
    const position = positions[candidate];
    if (position) return position;
  }
  return positions[''];
}
