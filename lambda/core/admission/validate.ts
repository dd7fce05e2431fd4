import type { CrdViolation } from '../crd-rules.js';
import { formatPath } from '../schema.js';
import { matchesFormat } from './formats.js';
import type { SchemaNode } from './schema-node.js';
import { isObject } from './structural.js';

// The OpenAPI v3 validation the API server runs on a pruned, defaulted custom resource, with its
// wording: https://github.com/kubernetes/kubernetes/blob/v1.33.0/staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/validation/validation.go
// (kube-openapi's validator; each error turned into a field error without the "<path> in body"
// prefix). Formats are checked on strings only, as kube-openapi does, so `int32`/`int64` on
// integers are not enforced (formats.ts has the string formats checked).

type Path = readonly PropertyKey[];

/** A violation, and whether the API server then skips the CEL rules (blocking error types). */
export interface StructuralViolation extends CrdViolation {
  readonly blocking: boolean;
}

/** The JSON type the validator names ("integer" for a whole number). */
function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'bigint') return 'integer';
  return typeof value === 'object' ? 'object' : typeof value;
}

function typeMatches(expected: string, actual: string): boolean {
  if (expected === actual) return true;
  return expected === 'number' && actual === 'integer';
}

/** Go's %q-ish rendering of a value in a message. */
function render(value: unknown): string {
  return typeof value === 'string'
    ? JSON.stringify(value)
    : (JSON.stringify(value) ?? String(value));
}

function deepEqual(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (Array.isArray(left)) {
    return (
      Array.isArray(right) &&
      left.length === right.length &&
      left.every((item, index) => deepEqual(item, right[index]))
    );
  }
  if (isObject(left) && isObject(right)) {
    const keys = Object.keys(left);
    return (
      keys.length === Object.keys(right).length &&
      keys.every((key) => Object.hasOwn(right, key) && deepEqual(left[key], right[key]))
    );
  }
  return false;
}

/** Length in runes (code points), as Go's utf8.RuneCountInString. */
function runeLength(text: string): number {
  let length = 0;
  for (const _ of text) length += 1;
  return length;
}

function formatNumber(value: number): string {
  return String(value);
}

export class StructuralValidator {
  readonly violations: StructuralViolation[] = [];

  private add(path: Path, rule: string, message: string, blocking: boolean): void {
    this.violations.push({ path: formatPath(path), rule, message, blocking });
  }

  /** Validates `value` (present) against `node`. */
  validate(value: unknown, node: SchemaNode, path: Path): void {
    const { doc } = node;
    if (value === null && doc.nullable === true) return;
    const actual = jsonType(value);
    if (doc['x-kubernetes-int-or-string'] === true) {
      if (actual !== 'integer' && actual !== 'string') {
        this.add(path, 'type', `must be of type integer,string: "${actual}"`, true);
        return;
      }
    } else if (doc.type !== undefined && !typeMatches(doc.type, actual)) {
      this.add(path, 'type', `must be of type ${doc.type}: "${actual}"`, true);
      return;
    }
    this.junctions(value, node, path);
    if (typeof value === 'string') this.string(value, node, path);
    if (Array.isArray(value)) this.array(value, node, path);
    if (typeof value === 'number') this.number(value, node, path);
    if (isObject(value)) this.object(value, node, path);
    if (doc.enum !== undefined && !doc.enum.some((allowed) => deepEqual(allowed, value))) {
      const supported = doc.enum
        .map((allowed) =>
          JSON.stringify(typeof allowed === 'string' ? allowed : JSON.stringify(allowed))
        )
        .join(', ');
      this.add(
        path,
        'enum',
        `Unsupported value: ${render(value)}: supported values: ${supported}`,
        true
      );
    }
  }

  private string(value: string, node: SchemaNode, path: Path): void {
    const { doc } = node;
    const length =
      doc.maxLength === undefined && doc.minLength === undefined ? 0 : runeLength(value);
    if (doc.maxLength !== undefined && length > doc.maxLength) {
      this.add(path, 'max-length', `may not be longer than ${doc.maxLength}`, true);
    }
    if (doc.minLength !== undefined && length < doc.minLength) {
      this.add(path, 'min-length', `should be at least ${doc.minLength} chars long`, false);
    }
    if (node.pattern !== undefined && !node.pattern.test(value)) {
      this.add(path, 'pattern', `should match '${doc.pattern}'`, false);
    }
    if (doc.format !== undefined && !matchesFormat(doc.format, value)) {
      this.add(path, 'format', `must be of type ${doc.format}: ${JSON.stringify(value)}`, true);
    }
  }

  private number(value: number, node: SchemaNode, path: Path): void {
    const { doc } = node;
    if (doc.multipleOf !== undefined && !Number.isInteger(value / doc.multipleOf)) {
      this.add(
        path,
        'multiple-of',
        `should be a multiple of ${formatNumber(doc.multipleOf)}`,
        false
      );
    }
    if (doc.maximum !== undefined) {
      const limit = formatNumber(doc.maximum);
      if (doc.exclusiveMaximum === true ? value >= doc.maximum : value > doc.maximum) {
        const relation = doc.exclusiveMaximum === true ? 'less than' : 'less than or equal to';
        this.add(path, 'maximum', `should be ${relation} ${limit}`, false);
      }
    }
    if (doc.minimum !== undefined) {
      const limit = formatNumber(doc.minimum);
      if (doc.exclusiveMinimum === true ? value <= doc.minimum : value < doc.minimum) {
        const relation =
          doc.exclusiveMinimum === true ? 'greater than' : 'greater than or equal to';
        this.add(path, 'minimum', `should be ${relation} ${limit}`, false);
      }
    }
  }

  private array(value: readonly unknown[], node: SchemaNode, path: Path): void {
    const { doc } = node;
    if (doc.minItems !== undefined && value.length < doc.minItems) {
      this.add(path, 'min-items', `should have at least ${doc.minItems} items`, false);
    }
    if (doc.maxItems !== undefined && value.length > doc.maxItems) {
      this.add(
        path,
        'max-items',
        `must have at most ${doc.maxItems} items (has ${value.length})`,
        true
      );
    }
    const { items } = node;
    if (items !== undefined) {
      value.forEach((item, index) => {
        this.validate(item, items, [...path, index]);
      });
    }
  }

  private object(value: Readonly<Record<string, unknown>>, node: SchemaNode, path: Path): void {
    const { doc } = node;
    const size = Object.keys(value).length;
    if (doc.maxProperties !== undefined && size > doc.maxProperties) {
      // The API server reports too many properties as a TooMany error ("items").
      this.add(
        path,
        'max-properties',
        `must have at most ${doc.maxProperties} items (has ${size})`,
        true
      );
    }
    if (doc.minProperties !== undefined && size < doc.minProperties) {
      this.add(
        path,
        'min-properties',
        `should have at least ${doc.minProperties} properties`,
        false
      );
    }
    for (const field of doc.required ?? []) {
      if (!Object.hasOwn(value, field))
        this.add([...path, field], 'required', 'Required value', true);
    }
    for (const [key, entry] of Object.entries(value)) {
      const schema = node.properties?.get(key) ?? node.additionalProperties;
      if (schema !== undefined) this.validate(entry, schema, [...path, key]);
    }
  }

  /** allOf / anyOf / oneOf / not: value validations evaluated at the same node. */
  private junctions(value: unknown, node: SchemaNode, path: Path): void {
    for (const sub of node.allOf) this.validate(value, sub, path);
    if (node.anyOf.length > 0) {
      const attempts = node.anyOf.map((sub) => this.trial(value, sub, path));
      if (!attempts.some((attempt) => attempt.length === 0)) {
        this.add(path, 'any-of', 'must validate at least one schema (anyOf)', false);
        this.violations.push(...fewest(attempts));
      }
    }
    if (node.oneOf.length > 0) {
      const attempts = node.oneOf.map((sub) => this.trial(value, sub, path));
      const passing = attempts.filter((attempt) => attempt.length === 0).length;
      if (passing !== 1) {
        this.add(path, 'one-of', 'must validate one and only one schema (oneOf)', false);
        if (passing === 0) this.violations.push(...fewest(attempts));
      }
    }
    if (node.not !== undefined && this.trial(value, node.not, path).length === 0) {
      this.add(path, 'not', 'must not validate the schema (not)', false);
    }
  }

  private trial(value: unknown, node: SchemaNode, path: Path): StructuralViolation[] {
    const validator = new StructuralValidator();
    validator.validate(value, node, path);
    return validator.violations;
  }

  /** `x-kubernetes-list-type`: set items and map keys must be unique. */
  listTypes(value: unknown, node: SchemaNode, path: Path): void {
    if (value === null || value === undefined) return;
    if (Array.isArray(value)) {
      const listType = node.doc['x-kubernetes-list-type'];
      if (listType === 'set') {
        value.forEach((item, index) => {
          if (value.slice(0, index).some((earlier) => deepEqual(earlier, item))) {
            this.add([...path, index], 'duplicate', `Duplicate value: ${render(item)}`, false);
          }
        });
      } else if (listType === 'map') {
        const keys = node.doc['x-kubernetes-list-map-keys'] ?? [];
        const keyOf = (item: unknown) =>
          Object.fromEntries(keys.map((key) => [key, isObject(item) ? (item[key] ?? null) : null]));
        value.forEach((item, index) => {
          const itemKey = keyOf(item);
          if (value.slice(0, index).some((earlier) => deepEqual(keyOf(earlier), itemKey))) {
            this.add([...path, index], 'duplicate', `Duplicate value: ${render(itemKey)}`, false);
          }
        });
      }
      const { items } = node;
      if (items !== undefined) {
        value.forEach((item, index) => {
          this.listTypes(item, items, [...path, index]);
        });
      }
      return;
    }
    if (!isObject(value)) return;
    for (const [key, entry] of Object.entries(value)) {
      const schema = node.properties?.get(key) ?? node.additionalProperties;
      if (schema !== undefined) this.listTypes(entry, schema, [...path, key]);
    }
  }
}

/** The alternative that failed least, as kube-openapi reports the best failure. */
function fewest(attempts: readonly StructuralViolation[][]): StructuralViolation[] {
  let best: StructuralViolation[] | undefined;
  for (const attempt of attempts) {
    if (best === undefined || attempt.length < best.length) best = attempt;
  }
  return best ?? [];
}
