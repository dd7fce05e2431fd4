// The two engines the admission evaluator needs but lambda/core cannot import: an RE2 regex
// engine (Kubernetes evaluates `pattern` with Go's regexp) and a CEL engine with the Kubernetes
// CEL libraries. lambda/adapters/admission builds them; tests may pass their own.

/** A compiled regular expression: unanchored search, as Go's `regexp.MatchString`. */
export interface CompiledRegex {
  test(text: string): boolean;
}

export interface RegexEngine {
  /** RE2 syntax; a pattern Go's regexp would refuse gives `{ error }`. */
  compile(pattern: string): CompiledRegex | { readonly error: string };
}

/** The outcome of one CEL evaluation: the value, or the evaluation error's message. */
export type CelOutcome = { readonly value: unknown } | { readonly error: string };

export interface CompiledCel {
  /** Top-level variables the expression reads (`self`, `oldSelf`). */
  readonly variables: ReadonlySet<string>;
  evaluate(bindings: Readonly<Record<string, unknown>>): CelOutcome;
}

/**
 * Values handed to `evaluate` are built by the evaluator from JSON: objects as `Map`, arrays as
 * arrays, integers as `bigint`, other numbers as `number`, strings, booleans, `null`, and for
 * formatted strings whatever `formatted` returns.
 */
export interface CelEngine {
  /** Parse (and plan) once; an expression the engine cannot run gives `{ error }`. */
  compile(expression: string): CompiledCel | { readonly error: string };
  /**
   * The engine's value for a string the schema formats: Kubernetes binds `date`/`date-time` as a
   * timestamp, `duration` as a duration and `byte` as bytes. Return `undefined` to keep the string.
   */
  formatted(format: string, value: string): unknown;
}

export interface AdmissionEngines {
  readonly regex: RegexEngine;
  readonly cel: CelEngine;
}
