import type { SchemaDoc, ValidationRuleDoc } from './crd-document.js';
import type { AdmissionEngines, CompiledCel, CompiledRegex } from './engines.js';

// A CRD version's openAPIV3Schema compiled once per CRD: patterns and CEL rules ready to run on
// any number of objects.

export interface CompiledRule {
  readonly rule: string;
  /** Stable across releases while the rule text is unchanged: `cel-` and a hash of the text. */
  readonly id: string;
  readonly program: CompiledCel;
  readonly message: string | undefined;
  readonly messageProgram: CompiledCel | undefined;
  /** `fieldPath` split into segments, relative to the rule's node. */
  readonly fieldPath: readonly string[];
  /** Reads `oldSelf`: applies to updates only. */
  readonly transition: boolean;
}

export interface SchemaNode {
  readonly doc: SchemaDoc;
  readonly properties: ReadonlyMap<string, SchemaNode> | undefined;
  /** The schema of keys not in `properties` (`additionalProperties: {…}`). */
  readonly additionalProperties: SchemaNode | undefined;
  readonly items: SchemaNode | undefined;
  readonly allOf: readonly SchemaNode[];
  readonly anyOf: readonly SchemaNode[];
  readonly oneOf: readonly SchemaNode[];
  readonly not: SchemaNode | undefined;
  readonly pattern: CompiledRegex | undefined;
  readonly rules: readonly CompiledRule[];
  /** Keeps fields the schema does not list (`x-kubernetes-preserve-unknown-fields`, `additionalProperties: true`). */
  readonly keepsUnknownFields: boolean;
}

/** FNV-1a, 32 bits: a short id that only changes when the rule text does. */
export function ruleId(rule: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < rule.length; index += 1) {
    hash ^= rule.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `cel-${hash.toString(16).padStart(8, '0')}`;
}

const FIELD_PATH_SEGMENT = /^(?:\.([A-Za-z_][A-Za-z0-9_-]*)|\['((?:[^'\\]|\\.)*)'\])/;

/** `.spec.foo['a.b']` → ['spec', 'foo', 'a.b']; undefined when it is not a field path. */
export function parseFieldPath(fieldPath: string): string[] | undefined {
  const segments: string[] = [];
  let rest = fieldPath.trim();
  while (rest !== '') {
    const match = FIELD_PATH_SEGMENT.exec(rest);
    if (match === null) return undefined;
    segments.push(match[1] ?? (match[2] ?? '').replace(/\\(.)/g, '$1'));
    rest = rest.slice(match[0].length);
  }
  return segments;
}

export class SchemaCompileError extends Error {}

function compileRule(
  rule: ValidationRuleDoc,
  where: string,
  engines: AdmissionEngines
): CompiledRule {
  const program = engines.cel.compile(rule.rule);
  if ('error' in program) {
    throw new SchemaCompileError(`${where}: rule ${JSON.stringify(rule.rule)}: ${program.error}`);
  }
  let messageProgram: CompiledCel | undefined;
  if (rule.messageExpression !== undefined) {
    const compiled = engines.cel.compile(rule.messageExpression);
    if ('error' in compiled) {
      throw new SchemaCompileError(
        `${where}: messageExpression ${JSON.stringify(rule.messageExpression)}: ${compiled.error}`
      );
    }
    messageProgram = compiled;
  }
  const fieldPath = rule.fieldPath === undefined ? [] : parseFieldPath(rule.fieldPath);
  if (fieldPath === undefined) {
    throw new SchemaCompileError(
      `${where}: fieldPath ${JSON.stringify(rule.fieldPath)} is not a field path`
    );
  }
  return {
    rule: rule.rule,
    id: ruleId(rule.rule),
    program,
    message: rule.message === '' ? undefined : rule.message,
    messageProgram,
    fieldPath,
    transition: program.variables.has('oldSelf'),
  };
}

/** Compiles the schema tree; throws SchemaCompileError naming the first pattern or rule that fails. */
export function compileSchema(doc: SchemaDoc, engines: AdmissionEngines, where = ''): SchemaNode {
  const child = (sub: SchemaDoc, segment: string) =>
    compileSchema(sub, engines, `${where}${segment}`);
  let pattern: CompiledRegex | undefined;
  if (doc.pattern !== undefined) {
    const compiled = engines.regex.compile(doc.pattern);
    if ('error' in compiled) {
      throw new SchemaCompileError(
        `${where || '<root>'}: pattern ${JSON.stringify(doc.pattern)}: ${compiled.error}`
      );
    }
    pattern = compiled;
  }
  const additional = doc.additionalProperties;
  return {
    doc,
    properties:
      doc.properties === undefined
        ? undefined
        : new Map(
            Object.entries(doc.properties).map(([name, sub]) => [
              name,
              child(sub, `.properties.${name}`),
            ])
          ),
    additionalProperties:
      typeof additional === 'object' ? child(additional, '.additionalProperties') : undefined,
    items: doc.items === undefined ? undefined : child(doc.items, '.items'),
    allOf: (doc.allOf ?? []).map((sub, index) => child(sub, `.allOf[${index}]`)),
    anyOf: (doc.anyOf ?? []).map((sub, index) => child(sub, `.anyOf[${index}]`)),
    oneOf: (doc.oneOf ?? []).map((sub, index) => child(sub, `.oneOf[${index}]`)),
    not: doc.not === undefined ? undefined : child(doc.not, '.not'),
    pattern,
    rules: (doc['x-kubernetes-validations'] ?? []).map((rule, index) =>
      compileRule(rule, `${where || '<root>'}.x-kubernetes-validations[${index}]`, engines)
    ),
    keepsUnknownFields: doc['x-kubernetes-preserve-unknown-fields'] === true || additional === true,
  };
}
