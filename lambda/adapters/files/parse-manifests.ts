import { Composer, CST, type Document, Lexer, LineCounter, Parser } from 'yaml';
import { karpenterCrdNameOf } from '../../core/admission/crd-names.js';
import { formatPath } from '../../core/schema.js';
import { addObject, isKarpenterObject, kindOf, type ParsedManifests } from './kube-objects.js';
import {
  type KubernetesValue,
  KubernetesYamlError,
  kubectlRefusesText,
  type Origin,
  toKubernetesValue,
} from './kube-yaml.js';
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

/**
 * What keeps Kubernetes (or the scanner) from reading a converted document: containers nested
 * more than `limit` levels deep, or a number JSON cannot hold (`.nan`, `.inf`), which
 * sigs.k8s.io/yaml fails to marshal. Iterative: no recursion.
 */
function treeProblem(value: unknown, limit: number): 'too-deep' | 'not-json' | undefined {
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [current, depth] = next;
    if (typeof current === 'number' && !Number.isFinite(current)) return 'not-json';
    if (typeof current !== 'object' || current === null) continue;
    if (depth >= limit) return 'too-deep';
    for (const child of Object.values(current)) pending.push([child, depth + 1]);
  }
  return undefined;
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

/**
 * Dotted JSON path → 1-based position of every key and sequence item of a converted value, within
 * the bounds above. A map entry's path points at its key, the one whose value Kubernetes keeps
 * (the last of duplicate keys, or the key in the map a `<<` merged); entries reached through an
 * alias point into the anchored node.
 */
function positionsOf(
  root: unknown,
  rootOffset: number | undefined,
  origins: WeakMap<object, Origin>,
  lineCounter: LineCounter
): Positions {
  const positions: Positions = {};
  let remaining = MAX_POSITIONS;
  const record = (path: PropertyKey[], offset: number) => {
    const key = formatPath(path);
    if (positions[key] !== undefined || remaining <= 0) return;
    const { line, col } = lineCounter.linePos(offset);
    positions[key] = { line, column: col };
    remaining -= 1;
  };
  const visit = (value: unknown, path: PropertyKey[], depth: number): void => {
    if (typeof value !== 'object' || value === null || depth > MAX_POSITION_DEPTH) return;
    const origin = origins.get(value);
    if (origin === undefined) return;
    if (Array.isArray(origin)) {
      const items = value as unknown[];
      for (const [index, offset] of (origin as readonly number[]).entries()) {
        if (remaining <= 0) return;
        record([...path, index], offset);
        visit(items[index], [...path, index], depth + 1);
      }
      return;
    }
    const entries = value as Record<string, unknown>;
    for (const [key, offset] of origin as ReadonlyMap<string, number>) {
      if (remaining <= 0) return;
      record([...path, key], offset);
      visit(entries[key], [...path, key], depth + 1);
    }
  };
  if (rootOffset !== undefined) record([], rootOffset);
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
  onDocument: (document: Document.Parsed, index: number) => Breach | undefined
): Breach | undefined {
  const parser = new Parser(lineCounter.addNewLine);
  // Every scalar a string: kube-yaml.ts resolves them as go-yaml v2 does (YAML 1.1), merges `<<`
  // keys, and lets the last of duplicate keys win, as Kubernetes does.
  const composer = new Composer({
    uniqueKeys: false,
    schema: 'failsafe',
    resolveKnownTags: false,
    logLevel: 'silent',
  });
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
      const breach = onDocument(document, documents);
      if (breach) return breach;
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

/** Counts what a parse found, for callers that must tell "nothing there" apart. */
export interface DocumentTally {
  /** Documents with content (neither empty nor `null`), readable or not. */
  documents: number;
}

/**
 * Parses YAML or JSON text (multi-document, `List` kinds) into Karpenter objects with line
 * positions, reading YAML as Kubernetes does (docs/yaml-as-kubernetes-reads-it.md). Never throws:
 * a bad document, or one kubectl would refuse, becomes an input error naming the file and line,
 * and a file past a limit (documents, tokens per document, tokens in the whole scan, aliases
 * expanded past those) one error naming the file and the limit, with none of its objects.
 */
export function parseManifestText(
  text: string,
  file: string,
  cluster = '',
  limits: ParseLimits = DEFAULT_INPUT_LIMITS,
  budget: TokenBudget = { tokensLeft: limits.maxTotalTokens },
  tally: DocumentTally = { documents: 0 }
): ParsedManifests {
  const result: ParsedManifests = { nodeClasses: [], nodePools: [], errors: [], crds: [] };
  const tooDeepAt = flowNestingTooDeep(text, MAX_FLOW_NESTING);
  if (tooDeepAt !== undefined) {
    result.errors.push({
      source: `${file}:${tooDeepAt}`,
      message: `brackets nest more than ${MAX_FLOW_NESTING} levels deep; not parsed`,
    });
    return result;
  }
  const refused = kubectlRefusesText(text);
  if (refused) {
    const line = text.slice(0, refused.offset).split('\n').length;
    result.errors.push({ source: `${file}:${line}`, message: refused.message });
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
      addDocument(result, document, index, { file, cluster, lineCounter, limits, budget, tally })
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
  if (result.crds?.length !== 0) return result;
  const { crds: _none, ...withoutCrds } = result;
  return withoutCrds;
}

interface DocumentContext {
  readonly file: string;
  readonly cluster: string;
  readonly lineCounter: LineCounter;
  readonly limits: ParseLimits;
  readonly budget: TokenBudget;
  readonly tally: DocumentTally;
}

/**
 * Converts one document as Kubernetes reads it. Returns the value, or records an input error
 * (undefined), or a breach of a limit by its aliases (which stops the file).
 */
function convertDocument(
  result: ParsedManifests,
  document: Document.Parsed,
  index: number,
  { file, lineCounter, limits, budget }: DocumentContext
): KubernetesValue | Breach | undefined {
  const fail = (offset: number, message: string) => {
    const { line } = lineCounter.linePos(offset);
    result.errors.push({ source: `${file}:${line}`, message: `document ${index + 1} ${message}` });
    return undefined;
  };
  let converted: KubernetesValue;
  try {
    converted = toKubernetesValue(document, MAX_NESTING);
  } catch (error) {
    if (!(error instanceof KubernetesYamlError)) throw error;
    return error.reason === 'too-deep'
      ? fail(document.range[0], `is nested more than ${MAX_NESTING} levels deep`)
      : fail(error.offset, `cannot be read: ${error.message} (kubectl refuses it too)`);
  }
  // Expanded aliases cost what the tokens they repeat cost: the token limits bound them too.
  budget.tokensLeft -= converted.aliasNodes;
  if (converted.aliasNodes > limits.maxDocumentTokens) {
    return {
      offset: document.range[0],
      message: `document ${index + 1} repeats ${converted.aliasNodes} YAML nodes through aliases, more than the tokens one document may hold (${describeLimit(limits, 'maxDocumentTokens')}); file not scanned`,
    };
  }
  if (budget.tokensLeft < 0) {
    return {
      offset: document.range[0],
      message: `the scan's files hold too many YAML tokens in all, aliases expanded (${describeLimit(limits, 'maxTotalTokens')}); file not scanned`,
    };
  }
  const problem = treeProblem(converted.value, MAX_NESTING);
  if (problem === 'too-deep') {
    return fail(document.range[0], `is nested more than ${MAX_NESTING} levels deep`);
  }
  if (problem === 'not-json') {
    return fail(
      document.range[0],
      'cannot be read: it holds .nan or .inf, which JSON cannot hold (kubectl refuses it too)'
    );
  }
  return converted;
}

function usesDirectives(document: Document.Parsed): boolean {
  const { directives } = document;
  return (
    directives.yaml.explicit === true ||
    Object.keys(directives.tags).some((handle) => handle !== '!' && handle !== '!!')
  );
}

/** Sorts one parsed document into the result: Karpenter objects, List items, or an input error. */
function addDocument(
  result: ParsedManifests,
  document: Document.Parsed,
  index: number,
  context: DocumentContext
): Breach | undefined {
  const { file, cluster, lineCounter, tally } = context;
  // kubectl splits the stream at `---` lines and decodes the first document of each part only:
  // one that follows `...` without a `---` of its own is never applied.
  if (index > 0 && document.directives.docStart !== true) return undefined;
  const firstError = document.errors[0];
  if (firstError) {
    tally.documents += 1;
    const { line } = lineCounter.linePos(firstError.pos[0]);
    result.errors.push({
      source: `${file}:${line}`,
      message: `document ${index + 1} is not valid YAML/JSON: ${firstError.message.split('\n')[0]}`,
    });
    return undefined;
  }
  if (usesDirectives(document)) {
    tally.documents += 1;
    const { line } = lineCounter.linePos(document.range[0]);
    result.errors.push({
      source: `${file}:${line}`,
      message: `document ${index + 1} follows a %YAML or %TAG directive, which kubectl refuses (it splits the directive from its document at \`---\`: "did not find expected <document start>")`,
    });
    return undefined;
  }
  const converted = convertDocument(result, document, index, context);
  if (converted === undefined) tally.documents += 1;
  if (converted === undefined || 'message' in converted) return converted;
  const { value, origins } = converted;
  // Empty, `null` or `~`: kubectl skips it.
  if (value === null || value === undefined) return undefined;
  tally.documents += 1;
  const { kind } = kindOf(value);
  if (kind === 'List' || kind?.endsWith('List')) {
    const items = (value as { items?: unknown }).items;
    if (!Array.isArray(items)) return undefined;
    const itemOffsets = origins.get(items);
    items.forEach((item, itemIndex) => {
      const itemOffset = Array.isArray(itemOffsets)
        ? (itemOffsets as readonly number[])[itemIndex]
        : undefined;
      if (addCrd(result, item, file, lineCounter, itemOffset ?? document.range[0])) return;
      if (!isKarpenterObject(item)) return;
      addObject(
        result,
        item,
        cluster,
        {
          file,
          document: index,
          item: itemIndex,
          positions: positionsOf(item, itemOffset, origins, lineCounter),
        },
        `${file}#${index + 1}.items[${itemIndex}]`
      );
    });
    return undefined;
  }
  const rootOffset = document.contents?.range?.[0];
  if (addCrd(result, value, file, lineCounter, rootOffset ?? document.range[0])) return undefined;
  if (!isKarpenterObject(value)) return undefined;
  const positions = positionsOf(value, rootOffset, origins, lineCounter);
  addObject(result, value, cluster, { file, document: index, positions }, `${file}#${index + 1}`);
  return undefined;
}

/** Keeps one of Karpenter's CRDs (the scan admits objects by it); true when `value` is one. */
function addCrd(
  result: ParsedManifests,
  value: unknown,
  file: string,
  lineCounter: LineCounter,
  offset: number
): boolean {
  const name = karpenterCrdNameOf(value);
  if (name === undefined) return false;
  const { line } = lineCounter.linePos(offset);
  result.crds?.push({
    name,
    document: value,
    origin: { kind: 'manifest', location: `${file}:${line}` },
  });
  return true;
}
