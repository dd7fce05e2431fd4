import type { CrdViolation } from '../crd-rules.js';
import { formatPath } from '../schema.js';
import { CelValueBuilder } from './cel-values.js';
import { type CrdVersionDoc, parseCrdDocument } from './crd-document.js';
import type { AdmissionEngines, CelOutcome } from './engines.js';
import { objectNameProblem } from './formats.js';
import {
  type CompiledRule,
  compileSchema,
  SchemaCompileError,
  type SchemaNode,
} from './schema-node.js';
import {
  applyDefaults,
  deepCopy,
  fieldSchema,
  isObject,
  type PruneReport,
  prune,
  pruneNonNullableNulls,
} from './structural.js';
import type { AdmissionVerdict, CrdAdmission, CrdDocument } from './types.js';
import { StructuralValidator, type StructuralViolation } from './validate.js';

// Admission of one custom resource as the API server decides it for the version the object asks
// for: prune, null-prune and default (decoding), then metadata and OpenAPI validation, list-type
// uniqueness, then the x-kubernetes-validations rules, which the API server skips when an earlier
// error is of a blocking kind (type, enum, required, maxLength, maxItems, maxProperties):
// https://github.com/kubernetes/kubernetes/blob/v1.33.0/staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresource/strategy.go
// Not modelled: CEL cost budgets, ratcheting and transition rules (updates only), metadata
// beyond name/generateName, and the Kubernetes quantity, URL, IP/CIDR, semver and format CEL
// libraries (no Karpenter CRD rule uses them: such a rule fails to compile, see the adapter).

type Path = readonly PropertyKey[];

const CEL_SKIPPED_MESSAGE =
  'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

interface ServedVersion {
  readonly name: string;
  readonly root: SchemaNode | undefined;
  readonly statusSubresource: boolean;
}

/** Kubernetes' wording for a CEL evaluation error at a rule. */
function evaluationErrorMessage(error: string, rule: CompiledRule): string {
  const subject = rule.message?.trim() || rule.rule.trim();
  if (error.startsWith('no such overload')) {
    return `'${error}': call arguments did not match a supported operator, function or macro signature for rule: ${subject}`;
  }
  return `${error} evaluating rule: ${subject}`;
}

/** A messageExpression's message, when it gives a usable one (a non-empty single-line string). */
function expressionMessage(outcome: CelOutcome): string | undefined {
  if (!('value' in outcome) || typeof outcome.value !== 'string') return undefined;
  const text = outcome.value.trim();
  return text === '' || /[\r\n]/.test(text) ? undefined : text;
}

class Review {
  readonly violations: CrdViolation[] = [];
  readonly transitionRules = new Set<CompiledRule>();
  private readonly values: CelValueBuilder;

  constructor(engines: AdmissionEngines) {
    this.values = new CelValueBuilder(engines.cel);
  }

  /** Runs every rule at every node present in `value`, top-down. */
  rules(value: unknown, node: SchemaNode, path: Path, resource = false): void {
    if (value === null || value === undefined) return;
    for (const rule of node.rules) {
      if (rule.transition) {
        this.transitionRules.add(rule);
        continue;
      }
      this.rule(rule, this.values.build(value, node, resource), path);
    }
    if (Array.isArray(value)) {
      const { items } = node;
      if (items !== undefined) {
        value.forEach((item, index) => {
          this.rules(item, items, [...path, index]);
        });
      }
    } else if (isObject(value)) {
      for (const [key, entry] of Object.entries(value)) {
        if (resource && key === 'metadata') continue;
        const schema = fieldSchema(node, key);
        if (schema !== undefined) this.rules(entry, schema, [...path, key]);
      }
    }
  }

  private rule(rule: CompiledRule, self: unknown, path: Path): void {
    const outcome = rule.program.evaluate({ self });
    if ('error' in outcome) {
      this.add(path, rule.id, evaluationErrorMessage(outcome.error, rule));
      return;
    }
    if (outcome.value === true) return;
    const fromExpression =
      rule.messageProgram === undefined
        ? undefined
        : expressionMessage(rule.messageProgram.evaluate({ self }));
    const message = fromExpression ?? rule.message?.trim() ?? `failed rule: ${rule.rule.trim()}`;
    this.add([...path, ...rule.fieldPath], rule.id, message);
  }

  add(path: Path, rule: string, message: string): void {
    this.violations.push({ path: formatPath(path), rule, message });
  }
}

const NAME_REQUIRED: StructuralViolation = {
  path: 'metadata.name',
  rule: 'metadata-name',
  message: 'Required value: name or generateName is required',
  blocking: true,
};

/** ObjectMeta's name as the API server validates it for a custom resource. */
function metadataViolations(object: Record<string, unknown>): StructuralViolation[] {
  const metadata = object.metadata;
  if (metadata === undefined) return [NAME_REQUIRED];
  if (!isObject(metadata)) {
    return [{ path: 'metadata', rule: 'type', message: 'must be of type object', blocking: true }];
  }
  const { name, generateName } = metadata;
  if (typeof name === 'string' && name !== '') {
    const message = objectNameProblem(name);
    if (message === undefined) return [];
    return [{ path: 'metadata.name', rule: 'metadata-name', message, blocking: false }];
  }
  return typeof generateName === 'string' && generateName !== '' ? [] : [NAME_REQUIRED];
}

function splitApiVersion(apiVersion: unknown): { group: string; version: string } | undefined {
  if (typeof apiVersion !== 'string') return undefined;
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

function compileVersion(version: CrdVersionDoc, engines: AdmissionEngines): ServedVersion {
  return {
    name: version.name,
    root:
      version.schema === undefined
        ? undefined
        : compileSchema(version.schema, engines, `versions[${version.name}].openAPIV3Schema`),
    statusSubresource: version.statusSubresource,
  };
}

/**
 * Compiles the CRD once (every served version's patterns and rules) for any number of reviews,
 * or says why it cannot be used.
 */
export function compileCrdAdmission(
  crd: CrdDocument,
  engines: AdmissionEngines
): CrdAdmission | { readonly error: string } {
  const parsed = parseCrdDocument(crd.document);
  if ('error' in parsed) return { error: `${crd.name}: not a usable CRD: ${parsed.error}` };
  const { group, kind } = parsed.crd;
  let served: ServedVersion[];
  try {
    served = parsed.crd.versions
      .filter((version) => version.served)
      .map((version) => compileVersion(version, engines));
  } catch (error) {
    if (error instanceof SchemaCompileError) return { error: `${crd.name}: ${error.message}` };
    throw error;
  }
  const label = `${crd.name} from ${crd.origin.location}`;
  const servedNames = served.map((version) => `"${version.name}"`).join(', ') || 'none';

  const reject = (version: string, object: unknown, violation: CrdViolation): AdmissionVerdict => ({
    crd: label,
    version,
    violations: [violation],
    pruned: [],
    defaulted: object,
    openPaths: [],
    skippedTransitionRules: 0,
  });

  return {
    crd: label,
    review(object: unknown): AdmissionVerdict {
      if (!isObject(object)) {
        return reject('', object, {
          path: '',
          rule: 'type',
          message: `must be of type object: "${object === null ? 'null' : Array.isArray(object) ? 'array' : typeof object}"`,
        });
      }
      const requested = splitApiVersion(object.apiVersion);
      if (requested === undefined || requested.group !== group) {
        return reject(requested?.version ?? '', object, {
          path: 'apiVersion',
          rule: 'api-version',
          message: `${JSON.stringify(object.apiVersion ?? null)} is not a version of ${group}: served versions: ${servedNames}`,
        });
      }
      if (object.kind !== kind) {
        return reject(requested.version, object, {
          path: 'kind',
          rule: 'kind',
          message: `Unsupported value: ${JSON.stringify(object.kind ?? null)}: supported values: "${kind}"`,
        });
      }
      const version = served.find((candidate) => candidate.name === requested.version);
      if (version === undefined) {
        return reject(requested.version, object, {
          path: 'apiVersion',
          rule: 'version-not-served',
          message: `no matches for kind "${kind}" in version "${group}/${requested.version}": served versions: ${servedNames}`,
        });
      }
      return reviewServed(version, object);
    },
  };

  function reviewServed(version: ServedVersion, object: Record<string, unknown>): AdmissionVerdict {
    const working = deepCopy(object) as Record<string, unknown>;
    // On create the status subresource's status is dropped: neither pruned nor validated here.
    const hasStatus = version.statusSubresource && Object.hasOwn(working, 'status');
    const status = working.status;
    if (hasStatus) delete working.status;
    const report: PruneReport = { pruned: [], openPaths: [] };
    const { root } = version;
    if (root !== undefined) {
      prune(working, root, [], report, true);
      pruneNonNullableNulls(working, root);
      applyDefaults(working, root);
    }
    const structural = new StructuralValidator();
    const review = new Review(engines);
    const metadata = metadataViolations(working);
    if (root !== undefined) {
      structural.validate(working, root, []);
      structural.listTypes(working, root, []);
    }
    const blocking = [...metadata, ...structural.violations].some(
      (violation) => violation.blocking
    );
    if (root !== undefined) {
      if (blocking) {
        collectTransitionRules(working, root, review.transitionRules, true);
        if (hasRules(root)) review.add([], 'cel-not-evaluated', CEL_SKIPPED_MESSAGE);
      } else {
        review.rules(working, root, [], true);
      }
    }
    const defaulted = hasStatus ? { ...working, status } : working;
    return {
      crd: label,
      version: version.name,
      violations: [
        ...[...metadata, ...structural.violations].map(({ path, rule, message }) => ({
          path,
          rule,
          message,
        })),
        ...review.violations,
      ],
      pruned: report.pruned,
      defaulted,
      openPaths: report.openPaths,
      skippedTransitionRules: review.transitionRules.size,
    };
  }
}

function hasRules(node: SchemaNode): boolean {
  return (
    node.rules.length > 0 ||
    [...(node.properties?.values() ?? [])].some(hasRules) ||
    (node.additionalProperties !== undefined && hasRules(node.additionalProperties)) ||
    (node.items !== undefined && hasRules(node.items))
  );
}

/** The transition rules that would apply to `value` (counted even when CEL is skipped). */
function collectTransitionRules(
  value: unknown,
  node: SchemaNode,
  into: Set<CompiledRule>,
  resource = false
): void {
  if (value === null || value === undefined) return;
  for (const rule of node.rules) if (rule.transition) into.add(rule);
  if (Array.isArray(value)) {
    const { items } = node;
    if (items !== undefined) for (const item of value) collectTransitionRules(item, items, into);
  } else if (isObject(value)) {
    for (const [key, entry] of Object.entries(value)) {
      if (resource && key === 'metadata') continue;
      const schema = fieldSchema(node, key);
      if (schema !== undefined) collectTransitionRules(entry, schema, into);
    }
  }
}
