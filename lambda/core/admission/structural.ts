import { formatPath } from '../schema.js';
import type { SchemaNode } from './schema-node.js';

// What the API server does to a custom resource as it decodes it, before any validation:
// unknown fields pruned, nulls the schema neither allows nor defaults dropped, defaults applied.
// https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#field-pruning
// https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#defaulting

export type JsonObject = Record<string, unknown>;
type Path = readonly PropertyKey[];

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sets a key even when it is `__proto__` (keys are user data). */
function setKey(target: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

export function deepCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(deepCopy);
  if (!isObject(value)) return value;
  const copy: JsonObject = {};
  for (const [key, entry] of Object.entries(value)) setKey(copy, key, deepCopy(entry));
  return copy;
}

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

export interface PruneReport {
  readonly pruned: string[];
  readonly openPaths: string[];
}

/** The schema of one field of an object node: its property, else additionalProperties. */
export function fieldSchema(node: SchemaNode | undefined, key: string): SchemaNode | undefined {
  return node?.properties?.get(key) ?? node?.additionalProperties;
}

/** An object's embedded apiVersion/kind/metadata the API server keeps whatever the schema says. */
function keptMetaField(node: SchemaNode, key: string, value: unknown, root: boolean): boolean {
  if (!root && node.doc['x-kubernetes-embedded-resource'] !== true) return false;
  if (key === 'metadata') return isObject(value);
  return (key === 'apiVersion' || key === 'kind') && typeof value === 'string';
}

/** Removes fields the structural schema does not know, in place; reports their paths. */
export function prune(
  value: unknown,
  node: SchemaNode | undefined,
  path: Path,
  report: PruneReport,
  root = false
): void {
  if (node?.keepsUnknownFields === true) {
    if (node.doc['x-kubernetes-preserve-unknown-fields'] === true) {
      report.openPaths.push(formatPath(path));
    }
    pruneKnown(value, node, path, report, root);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      prune(item, node?.items, [...path, index], report);
    });
    return;
  }
  if (!isObject(value)) return;
  for (const [key, entry] of Object.entries(value)) {
    if (node !== undefined && keptMetaField(node, key, entry, root)) continue;
    const schema = node === undefined ? undefined : fieldSchema(node, key);
    if (schema !== undefined) {
      prune(entry, schema, [...path, key], report);
    } else if (root && META_FIELDS.has(key)) {
      // Kept at the resource root even when not of the expected type: validation reports it.
    } else {
      report.pruned.push(formatPath([...path, key]));
      delete value[key];
    }
  }
}

/** Under x-kubernetes-preserve-unknown-fields: unknown fields stay, known ones are still pruned inside. */
function pruneKnown(
  value: unknown,
  node: SchemaNode,
  path: Path,
  report: PruneReport,
  root: boolean
): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      if (node.items !== undefined) pruneKnown(item, node.items, [...path, index], report, false);
    });
    return;
  }
  if (!isObject(value)) return;
  for (const [key, entry] of Object.entries(value)) {
    if (keptMetaField(node, key, entry, root)) continue;
    const schema = fieldSchema(node, key);
    if (schema !== undefined) prune(entry, schema, [...path, key], report);
  }
}

function isNonNullableNull(value: unknown, node: SchemaNode | undefined): boolean {
  return value === null && node !== undefined && node.doc.nullable !== true;
}

/** Drops `null`s the schema does not allow and has no default for (those get the default). */
export function pruneNonNullableNulls(value: unknown, node: SchemaNode | undefined): void {
  if (Array.isArray(value)) {
    for (const item of value) pruneNonNullableNulls(item, node?.items);
    return;
  }
  if (!isObject(value)) return;
  for (const [key, entry] of Object.entries(value)) {
    const schema = fieldSchema(node, key);
    if (isNonNullableNull(entry, schema) && schema?.doc.default === undefined) {
      delete value[key];
    } else {
      pruneNonNullableNulls(entry, schema);
    }
  }
}

/**
 * Fills in defaults in place: a missing field (or a null one the schema does not allow) of an
 * object that exists gets a copy of its default, then the defaulted value is defaulted in turn.
 */
export function applyDefaults(value: unknown, node: SchemaNode | undefined): void {
  if (node === undefined) return;
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      if (isNonNullableNull(item, node.items) && node.items?.doc.default !== undefined) {
        value[index] = deepCopy(node.items.doc.default);
      } else {
        applyDefaults(item, node.items);
      }
    });
    return;
  }
  if (!isObject(value)) return;
  for (const [key, property] of node.properties ?? []) {
    if (property.doc.default === undefined) continue;
    if (!Object.hasOwn(value, key) || isNonNullableNull(value[key], property)) {
      setKey(value, key, deepCopy(property.doc.default));
    }
  }
  for (const [key, entry] of Object.entries(value)) {
    const property = node.properties?.get(key);
    if (property !== undefined) {
      applyDefaults(entry, property);
    } else if (node.additionalProperties !== undefined) {
      const additional = node.additionalProperties;
      if (isNonNullableNull(entry, additional) && additional.doc.default !== undefined) {
        setKey(value, key, deepCopy(additional.doc.default));
      } else {
        applyDefaults(entry, additional);
      }
    }
  }
}
