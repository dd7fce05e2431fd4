import type {
  CheckInput,
  ClusterContext,
  Inventory,
  NodeClassEntry,
  NodePoolEntry,
} from '../inventory.js';
import type { InputError } from '../report.js';

/** Karpenter objects and the clusters they belong to, from files, a world file or live clusters. */
export interface LoadedObjects {
  readonly clusters: readonly ClusterContext[];
  readonly nodeClasses: readonly NodeClassEntry[];
  readonly nodePools: readonly NodePoolEntry[];
  /** Inputs this source provides (`spec`, plus `cluster` when it read live cluster state). */
  readonly inputs: readonly CheckInput[];
  /** Unreadable files or documents; the rest is still scanned. */
  readonly inputErrors: readonly InputError[];
}

/** Port: where NodeClasses come from. Implementations never throw for one bad document or cluster. */
export interface ObjectSource {
  load(): Promise<LoadedObjects>;
}

/**
 * Port: a step that adds facts to the inventory (AWS facts, permission simulations). It returns a
 * new inventory with its input added to `inputs`; per-source failures become `unavailable` slices.
 */
export interface InventoryEnricher {
  readonly input: CheckInput;
  enrich(inventory: Inventory): Promise<Inventory>;
}
