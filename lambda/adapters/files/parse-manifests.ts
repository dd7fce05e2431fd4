import { isMap, isScalar, isSeq, LineCounter, type Node, parseAllDocuments } from 'yaml';
import type { NodeClassEntry, NodePoolEntry, SourceLocation } from '../../core/inventory.js';
import type { InputError } from '../../core/report.js';
import { formatPath, parseEC2NodeClass, parseNodePool } from '../../core/schema.js';

export interface ParsedManifests {
  readonly nodeClasses: NodeClassEntry[];
  readonly nodePools: NodePoolEntry[];
  readonly errors: InputError[];
}

type Positions = Record<string, { line: number; column: number }>;

// Bounds keep a hostile or accidental input (deep nesting, alias bombs) from exhausting memory.
const MAX_DEPTH = 64;
const MAX_POSITIONS = 20_000;

function collectPositions(
  node: Node | null | undefined,
  path: PropertyKey[],
  lineCounter: LineCounter,
  positions: Positions,
  depth: number
): void {
  if (!node || depth > MAX_DEPTH || Object.keys(positions).length > MAX_POSITIONS) return;
  if (node.range) {
    const { line, col } = lineCounter.linePos(node.range[0]);
    positions[formatPath(path)] = { line, column: col };
  }
  if (isMap(node)) {
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
      if (key === undefined) continue;
      // Point a key's path at the key itself: that is the line a reader looks for.
      if (isScalar(pair.key) && pair.key.range) {
        const { line, col } = lineCounter.linePos(pair.key.range[0]);
        positions[formatPath([...path, key])] = { line, column: col };
      }
      const value = pair.value as Node | null;
      if (value && (isMap(value) || isSeq(value))) {
        collectPositions(value, [...path, key], lineCounter, positions, depth + 1);
      }
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, index) => {
      collectPositions(item as Node, [...path, index], lineCounter, positions, depth + 1);
    });
  }
}

function kindOf(value: unknown): { kind?: string; apiVersion?: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  const record = value as Record<string, unknown>;
  return {
    ...(typeof record.kind === 'string' ? { kind: record.kind } : {}),
    ...(typeof record.apiVersion === 'string' ? { apiVersion: record.apiVersion } : {}),
  };
}

function nameOf(value: unknown): string | undefined {
  const metadata = (value as { metadata?: unknown }).metadata;
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  const name = (metadata as { name?: unknown }).name;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/** Sorts one Kubernetes object into the result; other kinds are ignored. */
export function addObject(
  result: ParsedManifests,
  value: unknown,
  cluster: string,
  source: SourceLocation | undefined,
  placeholder: string
): void {
  const { kind, apiVersion } = kindOf(value);
  if (kind === 'EC2NodeClass' && apiVersion?.startsWith('karpenter.k8s.aws/')) {
    result.nodeClasses.push({
      cluster,
      name: nameOf(value) ?? placeholder,
      apiVersion,
      raw: value,
      parsed: parseEC2NodeClass(value),
      ...(source ? { source } : {}),
    });
  } else if (kind === 'NodePool' && apiVersion?.startsWith('karpenter.sh/')) {
    result.nodePools.push({
      cluster,
      name: nameOf(value) ?? placeholder,
      parsed: parseNodePool(value),
      ...(source ? { source } : {}),
    });
  }
}

/**
 * Parses YAML or JSON text (multi-document, `List` kinds) into Karpenter objects with line
 * positions. Never throws: a bad document becomes an input error naming the file and line.
 */
export function parseManifestText(text: string, file: string, cluster = ''): ParsedManifests {
  const result: ParsedManifests = { nodeClasses: [], nodePools: [], errors: [] };
  const lineCounter = new LineCounter();
  let documents: ReturnType<typeof parseAllDocuments>;
  try {
    documents = parseAllDocuments(text, { lineCounter, prettyErrors: false, uniqueKeys: false });
  } catch (error) {
    result.errors.push({ source: file, message: `cannot parse: ${String(error)}` });
    return result;
  }
  if (!Array.isArray(documents)) documents = [];
  documents.forEach((document, index) => {
    const firstError = document.errors[0];
    if (firstError) {
      const { line } = lineCounter.linePos(firstError.pos[0]);
      result.errors.push({
        source: `${file}:${line}`,
        message: `document ${index + 1} is not valid YAML/JSON: ${firstError.message.split('\n')[0]}`,
      });
      return;
    }
    let value: unknown;
    try {
      value = document.toJS({ maxAliasCount: 100 });
    } catch (error) {
      result.errors.push({
        source: file,
        message: `document ${index + 1} cannot be read: ${error instanceof Error ? error.message : String(error)}`,
      });
      return;
    }
    if (value === null || value === undefined) return;
    const positions: Positions = {};
    const { kind } = kindOf(value);
    if (kind === 'List' || kind?.endsWith('List')) {
      const items = (value as { items?: unknown }).items;
      if (!Array.isArray(items)) return;
      const itemsNode = isMap(document.contents) ? document.contents.get('items', true) : undefined;
      items.forEach((item, itemIndex) => {
        const itemPositions: Positions = {};
        const itemNode = isSeq(itemsNode) ? (itemsNode.items[itemIndex] as Node) : undefined;
        collectPositions(itemNode, [], lineCounter, itemPositions, 0);
        addObject(
          result,
          item,
          cluster,
          { file, document: index, positions: itemPositions },
          `${file}#${index + 1}.items[${itemIndex}]`
        );
      });
      return;
    }
    collectPositions(document.contents as Node, [], lineCounter, positions, 0);
    addObject(result, value, cluster, { file, document: index, positions }, `${file}#${index + 1}`);
  });
  return result;
}
