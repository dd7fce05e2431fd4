import { CelScalar, celEnv, isCelError, parse, plan } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import type {
  AdmissionEngines,
  CelEngine,
  CompiledCel,
  RegexEngine,
} from '../../core/admission/engines.js';
import { kubernetesCelFunctions, RegexCache } from './kubernetes-cel.js';

// The engines the admission evaluator runs on: RE2 through re2js (a port of RE2/J, Go's regexp
// syntax and semantics; @bufbuild/re2, which @bufbuild/cel carries, only answers yes/no, and
// `find` needs the match) and CEL through @bufbuild/cel with the Kubernetes libraries.

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** @bufbuild/cel's wording → cel-go's, which the API server's messages carry. */
export function celGoWording(message: string): string {
  const missing = /^field not found: (.*)$/.exec(message) ?? /^key not found: (.*)$/.exec(message);
  if (missing !== null) return `no such key: ${missing[1]}`;
  const overload = /^found no matching overload for '(.*)' applied to '(.*)'$/.exec(message);
  if (overload !== null) return `no such overload: ${overload[1]}${overload[2]}`;
  return message;
}

/** Identifiers and called functions of a parsed expression (the macros are already expanded). */
function references(node: unknown, calls: Set<string>, identifiers: Set<string>): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const child of node) references(child, calls, identifiers);
    return;
  }
  const kind = (node as { exprKind?: { case?: string; value?: Record<string, unknown> } }).exprKind;
  if (kind?.case === 'callExpr') calls.add(String(kind.value?.function));
  if (kind?.case === 'identExpr') identifiers.add(String(kind.value?.name));
  for (const child of Object.values(node)) {
    if (typeof child === 'object') references(child, calls, identifiers);
  }
}

function createRegexEngine(regexes: RegexCache): RegexEngine {
  return {
    compile(pattern) {
      try {
        const regex = regexes.get(pattern);
        return { test: (text) => regex.test(text) };
      } catch (error) {
        return { error: messageOf(error) };
      }
    },
  };
}

function createCelEngine(regexes: RegexCache): CelEngine {
  const env = celEnv({
    variables: { self: CelScalar.DYN, oldSelf: CelScalar.DYN },
    funcs: [...strings, ...kubernetesCelFunctions(regexes)],
    re2: { compile: (pattern) => regexes.get(pattern) },
  });
  const conversions = celEnv({ variables: { value: CelScalar.STRING } });
  const toTimestamp = plan(conversions, parse('timestamp(value)'));
  const toDuration = plan(conversions, parse('duration(value)'));

  function convert(run: typeof toTimestamp, value: string): unknown {
    const result = run({ value });
    return isCelError(result) ? undefined : result;
  }

  // @bufbuild/cel's parser takes ~2 ms for a long rule: each distinct text is compiled once per
  // process, however many nodes, versions, CRDs and clusters repeat it.
  const compiled = new Map<string, CompiledCel | { error: string }>();

  function compile(expression: string): CompiledCel | { error: string } {
    let parsed: ReturnType<typeof parse>;
    try {
      parsed = parse(expression);
    } catch (error) {
      return { error: `syntax error: ${messageOf(error)}` };
    }
    const calls = new Set<string>();
    const variables = new Set<string>();
    references(parsed.expr, calls, variables);
    const unknown = [...calls].filter(
      (name) => !/^[_@!-]/.test(name) && env.funcs.find(name) === undefined
    );
    if (unknown.length > 0) {
      return {
        error: `undeclared reference to ${unknown.map((name) => `'${name}'`).join(', ')}`,
      };
    }
    const program = plan(env, parsed);
    return {
      variables,
      evaluate(bindings) {
        try {
          const result = program(bindings as Parameters<typeof program>[0]);
          if (isCelError(result)) return { error: celGoWording(result.message) };
          return { value: result };
        } catch (error) {
          return { error: celGoWording(messageOf(error)) };
        }
      },
    };
  }

  return {
    compile(expression) {
      let program = compiled.get(expression);
      if (program === undefined) {
        program = compile(expression);
        compiled.set(expression, program);
      }
      return program;
    },
    formatted(format, value) {
      switch (format) {
        case 'date-time':
        case 'datetime':
          return convert(toTimestamp, value);
        case 'date':
          return convert(toTimestamp, `${value}T00:00:00Z`);
        case 'duration':
          return convert(toDuration, value);
        case 'byte':
          return Uint8Array.from(Buffer.from(value, 'base64'));
        default:
          return undefined;
      }
    },
  };
}

/** RE2 and CEL engines sharing one regex cache. */
export function createAdmissionEngines(): AdmissionEngines {
  const regexes = new RegexCache();
  return { regex: createRegexEngine(regexes), cel: createCelEngine(regexes) };
}
