import type { CelEngine } from './engines.js';
import type { SchemaNode } from './schema-node.js';
import { isObject } from './structural.js';

// JSON → the values CEL rules see, typed by the schema as Kubernetes types them:
// https://kubernetes.io/docs/reference/using-api/cel/#type-checking (objects with properties and
// maps are both maps here: field access on an absent field is the same "no such key" error, and
// has() works on both). `integer` → int, `number` → double, int-or-string → int or string,
// `date`/`date-time`/`duration`/`byte` strings → the engine's timestamp/duration/bytes.

const CEL_RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

const ESCAPABLE = /^[A-Za-z_./-][A-Za-z0-9_./-]*$/;

/**
 * A property name as CEL rules spell it (`x-y` → `x__dash__y`), or undefined when rules cannot
 * reach it: https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#escaping
 */
function escapePropertyName(name: string): string | undefined {
  if (CEL_RESERVED.has(name)) return `__${name}__`;
  if (!ESCAPABLE.test(name)) return undefined;
  return name
    .replaceAll('__', '__underscores__')
    .replaceAll('.', '__dot__')
    .replaceAll('-', '__dash__')
    .replaceAll('/', '__slash__');
}

/** Metadata fields CEL rules may read on a resource root or embedded resource. */
const RULE_VISIBLE_METADATA = ['name', 'generateName'];

export class CelValueBuilder {
  private readonly memo = new WeakMap<object, unknown>();

  constructor(private readonly engine: CelEngine) {}

  /** `value` as `self` for rules at `node`; `resource` for the root and embedded resources. */
  build(value: unknown, node: SchemaNode | undefined, resource = false): unknown {
    if (value === null || typeof value === 'boolean') return value;
    if (typeof value === 'string') {
      const format = node?.doc.format;
      if (format === undefined) return value;
      return this.engine.formatted(format, value) ?? value;
    }
    if (typeof value === 'number') {
      const type = node?.doc.type;
      if (type === 'number') return value;
      return Number.isInteger(value) ? BigInt(value) : value;
    }
    if (typeof value !== 'object') return value;
    const cached = this.memo.get(value);
    if (cached !== undefined) return cached;
    let built: unknown;
    if (Array.isArray(value)) {
      built = value.map((item) => this.build(item, node?.items));
    } else if (isObject(value)) {
      built = this.object(
        value,
        node,
        resource || node?.doc['x-kubernetes-embedded-resource'] === true
      );
    }
    this.memo.set(value, built);
    return built;
  }

  private object(
    value: Readonly<Record<string, unknown>>,
    node: SchemaNode | undefined,
    resource: boolean
  ): Map<string, unknown> {
    const map = new Map<string, unknown>();
    for (const [key, entry] of Object.entries(value)) {
      const property = node?.properties?.get(key);
      if (resource && key === 'metadata' && isObject(entry)) {
        const visible = new Map<string, unknown>();
        for (const field of RULE_VISIBLE_METADATA) {
          if (typeof entry[field] === 'string') visible.set(field, entry[field]);
        }
        // The API server names a generateName object before validating it (5 random characters).
        if (!visible.has('name') && typeof entry.generateName === 'string') {
          visible.set('name', `${entry.generateName}xxxxx`);
        }
        map.set(key, visible);
      } else if (property !== undefined) {
        const name = escapePropertyName(key);
        if (name !== undefined) map.set(name, this.build(entry, property));
      } else {
        // Map entries (additionalProperties) keep their keys; unknown kept fields are dyn.
        map.set(key, this.build(entry, node?.additionalProperties));
      }
    }
    return map;
  }
}
