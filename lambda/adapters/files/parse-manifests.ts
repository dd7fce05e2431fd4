import {
  Composer,
  CST,
  type Document,
  isMap,
  isScalar,
  isSeq,
  Lexer,
  LineCounter,
  type Node,
  Parser,
} from 'yaml';
import { formatPath } from '../../core/schema.js';
import { addObject, isKarpenterObject, kindOf, type ParsedManifests } from './kube-objects.js';
import { DEFAULT_INPUT_LIMITS, describeLimit, type InputLimits } from './limits.js';

export type { ParsedManifests };

type Positions = Record<string, { line: number; column: number }>;

// Bounds keep a hostile or accidental input (deep nesting, huge maps) from exhausting memory.
const MAX_POSITION_DEPTH = 64;
export const MAX_POSITIONS = 20_000;
/**
 * Deeper documents are refused. Far below the depth where the YAML parser runs out of stack, so
 * the outcome never depends on how much stack the caller happened to use; real manifests nest < 20.
 */
export const MAX_NESTING = 200;
/** Raw flow-collection depth refused before parsing (the YAML parser fails on a few thousand). */
export const MAX_FLOW_NESTING = 1_000;

/** True when `value` nests arrays/objects more than `limit` levels deep (iterative: no recursion). */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [current, depth] = next;
    if (typeof current !== 'object' || current === null) continue;
    if (depth >= limit) return true;
    for (const child of Object.values(current)) pending.push([child, depth + 1]);
  }
  return false;
}

/**
 * The line where flow collections (`[`, `{`) first nest deeper than `limit`, or undefined. Checked
 * on the raw text because the YAML parser itself runs out of memory on a few thousand levels of
 * flow nesting; quoted strings and comments are skipped, so real manifests never trip it.
 */
export function flowNestingTooDeep(text: string, limit: number): number | undefined {
  let depth = 0;
  let line = 1;
  let quote: '"' | "'" | undefined;
  let comment = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char === '\n') {
      line += 1;
      comment = false;
      continue;
    }
    if (comment) continue;
    if (quote !== undefined) {
      if (char === '\\' && quote === '"') index += 1;
      else if (char === quote) quote = undefined;
      continue;
    }
    if (char === '"' || char === "'") quote = char;
    else if (char === '#' && (index === 0 || /\s/.test(text[index - 1] ?? ''))) comment = true;
    else if (char === '[' || char === '{') {
      depth += 1;
      if (depth > limit) return line;
    } else if ((char === ']' || char === '}') && depth > 0) depth -= 1;
  }
  return undefined;
}

/** Dotted JSON path → 1-based position of every key and sequence item, within the bounds above. */
function positionsOf(root: Node | null | undefined, lineCounter: LineCounter): Positions {
  const positions: Positions = {};
  let remaining = MAX_POSITIONS;
  const record = (path: PropertyKey[], offset: number) => {
    const key = formatPath(path);
    // A map entry's path points at its key (recorded first): the line a reader looks for.
    if (positions[key] !== undefined || remaining <= 0) return;
    const { line, col } = lineCounter.linePos(offset);
    positions[key] = { line, column: col };
    remaining -= 1;
  };
  const visit = (node: Node | null | undefined, path: PropertyKey[], depth: number): void => {
    if (!node || depth > MAX_POSITION_DEPTH || remaining <= 0) return;
    if (node.range) record(path, node.range[0]);
    if (isMap(node)) {
      for (const pair of node.items) {
        if (remaining <= 0) return;
        if (!isScalar(pair.key)) continue;
        const childPath = [...path, String(pair.key.value)];
        if (pair.key.range) record(childPath, pair.key.range[0]);
        const value = pair.value as Node | null;
        if (value && (isMap(value) || isSeq(value))) visit(value, childPath, depth + 1);
      }
    } else if (isSeq(node)) {
      for (const [index, item] of node.items.entries()) {
        if (remaining <= 0) return;
        visit(item as Node, [...path, index], depth + 1);
      }
    }
  };
  visit(root, [], 0);
  return positions;
}

/** YAML tokens the files of one scan may still hold; shared by every file of the scan. */
export interface TokenBudget {
  tokensLeft: number;
}

type ParseLimits = Pick<InputLimits, 'maxDocuments' | 'maxDocumentTokens' | 'maxTotalTokens'>;

interface Breach {
  readonly offset: number;
  readonly message: string;
}

/**
 * Streams the text through the YAML lexer, parser and composer, handing each document to
 * `onDocument` as soon as it is complete, so only one document's syntax tree is alive at a time.
 * Every lexer token except spaces (which never come two in a row) is counted as it is read, and
 * the first limit passed stops the read there: memory stays bounded by the limits, not by the
 * input. Returns the breach, or undefined when the whole text was read.
 */
function composeWithinLimits(
  text: string,
  lineCounter: LineCounter,
  limits: ParseLimits,
  budget: TokenBudget,
  onDocument: (document: Document.Parsed, index: number) => void
): Breach | undefined {
  const parser = new Parser(lineCounter.addNewLine);
  const composer = new Composer({ uniqueKeys: false });
  let documents = 0;
  // The parser completes a document before the composer hands it over: this numbers the one
  // being read. Tokens since it began include `...` lines or stray tokens between documents.
  let parsedDocuments = 0;
  let documentTokens = 0;
  let scalarSource = false;
  const take = (composed: Iterable<Document.Parsed>): Breach | undefined => {
    for (const document of composed) {
      if (documents >= limits.maxDocuments) {
        return {
          offset: document.range[0],
          message: `holds too many documents (${describeLimit(limits, 'maxDocuments')}); not scanned`,
        };
      }
      onDocument(document, documents);
      documents += 1;
    }
    return undefined;
  };
  const feed = (tokens: Iterable<CST.Token>): Breach | undefined => {
    for (const token of tokens) {
      if (token.type === 'document') {
        parsedDocuments += 1;
        documentTokens = 0;
      }
      const breach = take(composer.next(token));
      if (breach) return breach;
    }
    return undefined;
  };
  lineCounter.addNewLine(0);
  for (const lexeme of new Lexer().lex(text)) {
    if (scalarSource) {
      // The text of the scalar whose marker was just counted.
      scalarSource = false;
    } else {
      const type = CST.tokenType(lexeme);
      scalarSource = type === 'scalar';
      if (type !== 'space') {
        documentTokens += 1;
        budget.tokensLeft -= 1;
        if (documentTokens > limits.maxDocumentTokens) {
          return {
            offset: parser.offset,
            message: `document ${parsedDocuments + 1} holds too many YAML tokens (${describeLimit(limits, 'maxDocumentTokens')}); file not scanned`,
          };
        }
        if (budget.tokensLeft < 0) {
          return {
            offset: parser.offset,
            message: `the scan's files hold too many YAML tokens in all (${describeLimit(limits, 'maxTotalTokens')}); file not scanned`,
          };
        }
      }
    }
    const breach = feed(parser.next(lexeme));
    if (breach) return breach;
  }
  return feed(parser.end()) ?? take(composer.end());
}

/**
 * Parses YAML or JSON text (multi-document, `List` kinds) into Karpenter objects with line
 * positions. Never throws: a bad document becomes an input error naming the file and line, and a
 * file past a limit (documents, tokens per document, tokens in the whole scan) one error naming the
 * file and the limit, with none of its objects.
 */
export function parseManifestText(
  text: string,
  file: string,
  cluster = '',
  limits: ParseLimits = DEFAULT_INPUT_LIMITS,
  budget: TokenBudget = { tokensLeft: limits.maxTotalTokens }
): ParsedManifests {
  const result: ParsedManifests = { nodeClasses: [], nodePools: [], errors: [] };
  const tooDeepAt = flowNestingTooDeep(text, MAX_FLOW_NESTING);
  if (tooDeepAt !== undefined) {
    result.errors.push({
      source: `${file}:${tooDeepAt}`,
      message: `brackets nest more than ${MAX_FLOW_NESTING} levels deep; not parsed`,
    });
    return result;
  }
  const lineCounter = new LineCounter();
  let breach: Breach | undefined;
  // The parser makes an Error per syntax error, and a stack trace made each of them cost ~1.5 KB
  // and ~25 µs (750 MB for a file of `}`); only their messages are used. Synchronous: nothing
  // else runs before the limit is restored.
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    breach = composeWithinLimits(text, lineCounter, limits, budget, (document, index) =>
      addDocument(result, document, index, { file, cluster, lineCounter })
    );
  } catch (error) {
    return {
      nodeClasses: [],
      nodePools: [],
      errors: [{ source: file, message: `cannot parse: ${String(error)}` }],
    };
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
  if (breach) {
    const { line } = lineCounter.linePos(breach.offset);
    return {
      nodeClasses: [],
      nodePools: [],
      errors: [{ source: `${file}:${line}`, message: breach.message }],
    };
  }
  return result;
}

/** Sorts one parsed document into the result: Karpenter objects, List items, or an input error. */
function addDocument(
  result: ParsedManifests,
  document: Document.Parsed,
  index: number,
  { file, cluster, lineCounter }: { file: string; cluster: string; lineCounter: LineCounter }
): void {
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
    const { line } = lineCounter.linePos(document.range[0]);
    result.errors.push({
      source: `${file}:${line}`,
      message: `document ${index + 1} cannot be read: ${error instanceof Error ? error.message : String(error)}`,
    });
    return;
  }
  if (value === null || value === undefined) return;
  if (nestsDeeperThan(value, MAX_NESTING)) {
    const { line } = lineCounter.linePos(document.range[0]);
    result.errors.push({
      source: `${file}:${line}`,
      message: `document ${index + 1} is nested more than ${MAX_NESTING} levels deep`,
    });
    return;
  }
  const { kind } = kindOf(value);
  if (kind === 'List' || kind?.endsWith('List')) {
    const items = (value as { items?: unknown }).items;
    if (!Array.isArray(items)) return;
    const itemsNode = isMap(document.contents) ? document.contents.get('items', true) : undefined;
    items.forEach((item, itemIndex) => {
      if (!isKarpenterObject(item)) return;
      const itemNode = isSeq(itemsNode) ? (itemsNode.items[itemIndex] as Node) : undefined;
      addObject(
        result,
        item,
        cluster,
        { file, document: index, item: itemIndex, positions: positionsOf(itemNode, lineCounter) },
        `${file}#${index + 1}.items[${itemIndex}]`
      );
    });
    return;
  }
  if (!isKarpenterObject(value)) return;
  const positions = positionsOf(document.contents as Node, lineCounter);
  addObject(result, value, cluster, { file, document: index, positions }, `${file}#${index + 1}`);
}
