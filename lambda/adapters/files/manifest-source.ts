import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { crdSlot } from '../../core/admission/crd-names.js';
import type { ClusterCrds, CrdDocument } from '../../core/admission/types.js';
import type { ClusterContext, NodeClassEntry, NodePoolEntry } from '../../core/inventory.js';
import type { ObjectOrigin } from '../../core/model.js';
import type { LoadedObjects, ObjectSource } from '../../core/ports/objects.js';
import type { InputError } from '../../core/report.js';
import {
  DEFAULT_INPUT_LIMITS,
  describeLimit,
  type InputLimits,
  inputLimitsFromEnv,
} from './limits.js';
import {
  type DocumentTally,
  type ParsedManifests,
  parseManifestText,
  type TokenBudget,
} from './parse-manifests.js';
import { decodeManifestBytes, readRegularFileBytes } from './read-input.js';
import { type ListDirectory, walkManifestFiles } from './walk.js';

/** Larger files are refused rather than parsed: no real NodeClass manifest comes close. */
export const MAX_MANIFEST_BYTES = DEFAULT_INPUT_LIMITS.maxInputBytes;

export interface ManifestSourceOptions {
  /** Files, directories (searched recursively) or `-` for standard input. */
  readonly paths: readonly string[];
  /** Context for spec checks (region, partition, Karpenter version). */
  readonly cluster: ClusterContext;
  /**
   * Reads standard input, rejecting as soon as more than `maxBytes` bytes arrive; decoded as
   * kubectl decodes it (read-input.ts `readCapped`).
   */
  readonly readStdin?: (maxBytes: number) => Promise<string>;
  /** Default: the documented limits, each overridden by its environment variable. */
  readonly limits?: InputLimits;
  /** Directory listing (tests inject huge directories); default: the file system. */
  readonly listDirectory?: ListDirectory;
  /**
   * `--crd FILE…`: Karpenter's CRDs to admit the objects by, in place of any of the same name
   * found among the scanned files. Other documents in these files are not scanned.
   */
  readonly crdFiles?: readonly string[];
}

interface Walk {
  readonly limits: InputLimits;
  readonly entries: { entriesLeft: number };
  readonly errors: InputError[];
}

async function expand(path: string, walk: Walk, options: ManifestSourceOptions): Promise<string[]> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(path)).isDirectory();
  } catch (error) {
    walk.errors.push({ source: path, message: describeFsError(error) });
    return [];
  }
  // Anything else (regular or not) is judged when read, with the file's own error.
  if (!isDirectory) return [path];
  const found = await walkManifestFiles(path, walk.entries, describeFsError, options.listDirectory);
  for (const error of found.errors) walk.errors.push(error);
  if (found.overBudget) {
    walk.errors.push({
      source: path,
      message: `holds too many manifest files and directories (${describeLimit(walk.limits, 'maxFiles')}); not scanned`,
    });
    return [];
  }
  if (found.files.length === 0) {
    // A CI job pointed at the wrong directory must not pass as "nothing found".
    walk.errors.push({ source: path, message: 'directory holds no .yaml, .yml or .json files' });
  }
  return found.files;
}

function emptyStdinMessage(text: string): string {
  return text.trim() === ''
    ? 'is empty: no manifest to scan (did the command before the pipe fail?)'
    : 'holds no manifest, only comments or empty documents: nothing to scan';
}

function describeFsError(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === 'ENOENT') return 'no such file or directory';
  if (code === 'EACCES') return 'permission denied';
  return error instanceof Error ? error.message : String(error);
}

async function readText(path: string, options: ManifestSourceOptions, limits: InputLimits) {
  if (path !== '-') {
    // Decoded by byte order mark, as kubectl decodes files (UTF-8, UTF-16LE, UTF-16BE).
    return decodeManifestBytes(
      await readRegularFileBytes(path, limits.maxInputBytes, 'maxInputBytes')
    );
  }
  if (!options.readStdin) throw new Error('standard input is not available');
  const text = await options.readStdin(limits.maxInputBytes);
  // A reader that ignored the cap: still refuse what it returned.
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limits.maxInputBytes) {
    throw new Error(
      `is ${bytes} bytes, too large (${describeLimit(limits, 'maxInputBytes')}); not read`
    );
  }
  return text;
}

/**
 * Gives each object that shares its cluster, kind and name with another its origin (file,
 * document, list item), so its findings get their own ids and locations. Objects with a unique
 * name get none: their finding ids stay independent of how the files are named or ordered.
 */
function withOrigins<T extends NodeClassEntry | NodePoolEntry>(
  entries: readonly T[],
  kind: string
): T[] {
  const key = (entry: T) => [entry.cluster, kind, entry.name].join('\u0000');
  const counts = new Map<string, number>();
  for (const entry of entries) counts.set(key(entry), (counts.get(key(entry)) ?? 0) + 1);
  return entries.map((entry) => {
    const { source } = entry;
    if ((counts.get(key(entry)) ?? 0) < 2 || source === undefined) return entry;
    const origin: ObjectOrigin = {
      file: source.file,
      document: source.document,
      ...(source.item === undefined ? {} : { item: source.item }),
    };
    return { ...entry, origin };
  });
}

/** Loads every manifest under the paths; one unreadable file never stops the others. */
export async function loadManifests(options: ManifestSourceOptions): Promise<ParsedManifests> {
  const limits = options.limits ?? inputLimitsFromEnv();
  const merged: ParsedManifests = { nodeClasses: [], nodePools: [], errors: [], crds: [] };
  const walk: Walk = { limits, entries: { entriesLeft: limits.maxFiles }, errors: merged.errors };
  const files: string[] = [];
  for (const path of options.paths) {
    if (path === '-') {
      files.push(path);
      continue;
    }
    // One push per file: spreading a 100k-element array overflows the call stack.
    for (const file of await expand(path, walk, options)) files.push(file);
  }
  const budget: TokenBudget = { tokensLeft: limits.maxTotalTokens };
  // A file named twice (`dir dir/a.yaml`) is read once: its objects must not be reported twice.
  const seen = new Set<string>();
  for (const [index, file] of files.entries()) {
    const source = file === '-' ? '<stdin>' : file;
    if (budget.tokensLeft <= 0) {
      const more = files.length - index;
      merged.errors.push({
        source,
        message: `not scanned${more > 1 ? `, nor ${more - 1} later file(s)` : ''}: the scan's files hold too many YAML tokens in all (${describeLimit(limits, 'maxTotalTokens')})`,
      });
      break;
    }
    const key = file === '-' ? file : resolve(file);
    if (seen.has(key)) continue;
    seen.add(key);
    let text: string;
    try {
      text = await readText(file, options, limits);
    } catch (error) {
      merged.errors.push({ source, message: describeFsError(error) });
      continue;
    }
    const tally: DocumentTally = { documents: 0 };
    const parsed = parseManifestText(text, source, options.cluster.name, limits, budget, tally);
    for (const entry of parsed.nodeClasses) merged.nodeClasses.push(entry);
    for (const entry of parsed.nodePools) merged.nodePools.push(entry);
    for (const error of parsed.errors) merged.errors.push(error);
    for (const crd of parsed.crds ?? []) merged.crds?.push(crd);
    if (file === '-' && parsed.errors.length === 0 && tally.documents === 0) {
      // A pipe whose producer failed (`kubectl get … | nodeclass-scan scan -`) must not pass as
      // "nothing found"; kubectl itself answers "no objects passed to apply".
      merged.errors.push({ source, message: emptyStdinMessage(text) });
    }
  }
  return {
    nodeClasses: withOrigins(merged.nodeClasses, 'EC2NodeClass'),
    nodePools: withOrigins(merged.nodePools, 'NodePool'),
    errors: merged.errors,
    crds: merged.crds ?? [],
  };
}

/** The CRDs of `--crd` files: each file must hold at least one of Karpenter's two. */
async function loadCrdFiles(
  files: readonly string[],
  limits: InputLimits
): Promise<{ crds: CrdDocument[]; errors: InputError[] }> {
  const crds: CrdDocument[] = [];
  const errors: InputError[] = [];
  const budget: TokenBudget = { tokensLeft: limits.maxTotalTokens };
  for (const file of files) {
    let text: string;
    try {
      text = decodeManifestBytes(
        await readRegularFileBytes(file, limits.maxInputBytes, 'maxInputBytes')
      );
    } catch (error) {
      errors.push({ source: file, message: `--crd: ${describeFsError(error)}` });
      continue;
    }
    const parsed = parseManifestText(text, file, '', limits, budget);
    for (const error of parsed.errors) errors.push(error);
    const found = parsed.crds ?? [];
    if (found.length === 0 && parsed.errors.length === 0) {
      errors.push({
        source: file,
        message:
          '--crd: holds no CustomResourceDefinition ec2nodeclasses.karpenter.k8s.aws or nodepools.karpenter.sh (apiextensions.k8s.io/v1)',
      });
    }
    for (const crd of found) crds.push({ ...crd, origin: { ...crd.origin, kind: 'file' } });
  }
  return { crds, errors };
}

/**
 * One CRD per name: a given one (`--crd`) before any found among the manifests. Different
 * documents of one name from the same kind of source are ambiguous: none is used, and the error
 * says which to give.
 */
function chooseCrds(
  given: readonly CrdDocument[],
  found: readonly CrdDocument[],
  errors: InputError[]
): Partial<Record<'nodeClass' | 'nodePool', CrdDocument>> {
  const chosen: Partial<Record<'nodeClass' | 'nodePool', CrdDocument>> = {};
  for (const candidates of [found, given]) {
    const byName = new Map<string, CrdDocument[]>();
    for (const crd of candidates) byName.set(crd.name, [...(byName.get(crd.name) ?? []), crd]);
    for (const [name, crds] of byName) {
      const [first] = crds;
      if (first === undefined) continue;
      const distinct = new Set(crds.map((crd) => JSON.stringify(crd.document)));
      if (distinct.size > 1) {
        const where = crds.map((crd) => crd.origin.location).join(', ');
        errors.push({
          source: first.origin.location,
          message: `${crds.length} different CustomResourceDefinitions ${name} (${where}): the objects are judged by the built-in rules; give the one the cluster runs with --crd`,
        });
        const slot = crdSlot(name);
        if (slot !== undefined) delete chosen[slot];
        continue;
      }
      const slot = crdSlot(name);
      if (slot !== undefined) chosen[slot] = first;
    }
  }
  return chosen;
}

/** The cluster's CRDs with the manifests' own (or `--crd`'s) in place of those of the same kind. */
function withManifestCrds(
  cluster: ClusterContext,
  chosen: Partial<Record<'nodeClass' | 'nodePool', CrdDocument>>
): ClusterContext {
  if (chosen.nodeClass === undefined && chosen.nodePool === undefined) return cluster;
  const crds: ClusterCrds = { ...cluster.crds, ...chosen };
  return { ...cluster, crds };
}

/** Port implementation: NodeClasses from manifest files, evaluated for one (possibly unnamed) cluster. */
export function createManifestSource(options: ManifestSourceOptions): ObjectSource {
  return {
    async load(): Promise<LoadedObjects> {
      const parsed = await loadManifests(options);
      const errors = [...parsed.errors];
      const given =
        options.crdFiles === undefined || options.crdFiles.length === 0
          ? { crds: [], errors: [] }
          : await loadCrdFiles(options.crdFiles, options.limits ?? inputLimitsFromEnv());
      errors.push(...given.errors);
      const chosen = chooseCrds(given.crds, parsed.crds ?? [], errors);
      return {
        clusters: [withManifestCrds(options.cluster, chosen)],
        nodeClasses: parsed.nodeClasses,
        nodePools: parsed.nodePools,
        inputs: ['spec'],
        inputErrors: errors,
      };
    },
  };
}
