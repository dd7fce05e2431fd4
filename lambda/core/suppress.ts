// Accepting a finding: an annotation on the object (`ignore-check.nodeclass-scanner/<check-id>`,
// as kube-linter's `ignore-check.kube-linter.io/<check>`) or an `ignore` rule of the CLI config
// file / CDK configuration. A suppressed finding stays in every report with status `suppressed`
// and its reason; it never alerts and never fails a build. Only `fail` and `error` are suppressed.
import { z } from 'zod';
import { type CheckMeta, nodeClassRef, nodePoolRef } from './check.js';
import { nodeClassSchemaValid } from './checks/nodeclass-schema-valid.js';
import { globMatches, type IgnoreRule, isExpired, resourceMatches } from './ignore-rules.js';
import type { Inventory } from './inventory.js';
import { materialHash } from './material.js';
import { type Finding, findingId, type ResourceRef, resourceKey } from './model.js';
import { formatPath } from './schema.js';

const IGNORE_CHECK_ANNOTATION_PREFIX = 'ignore-check.nodeclass-scanner/';

/** An object's annotations, keyed by the resource its findings are reported on. */
export interface AnnotatedObject {
  readonly resource: ResourceRef;
  readonly annotations: Readonly<Record<string, string>>;
}

const MetadataSchema = z.looseObject({
  metadata: z.looseObject({ annotations: z.record(z.string(), z.unknown()).optional() }),
});

function stringValues(record: Readonly<Record<string, unknown>> = {}): Record<string, string> {
  return Object.fromEntries(
    Object.entries(record).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string'
    )
  );
}

/**
 * The annotations of every EC2NodeClass and NodePool, read from the raw object when there is one,
 * so an object that fails the schema can still accept its schema findings.
 */
export function annotatedObjectsOf(
  inventory: Pick<Inventory, 'nodeClasses' | 'nodePools'>
): AnnotatedObject[] {
  const nodeClasses = inventory.nodeClasses.map((entry) => {
    const parsed = MetadataSchema.safeParse(entry.raw);
    return {
      resource: nodeClassRef(entry),
      annotations: stringValues(parsed.success ? parsed.data.metadata.annotations : {}),
    };
  });
  const nodePools = inventory.nodePools.map((entry) => {
    const parsed = MetadataSchema.safeParse(entry.raw);
    const fromRaw = parsed.success ? parsed.data.metadata.annotations : undefined;
    const fromParsed = entry.parsed.ok ? entry.parsed.value.metadata.annotations : undefined;
    return { resource: nodePoolRef(entry), annotations: stringValues(fromRaw ?? fromParsed) };
  });
  return [...nodeClasses, ...nodePools];
}

interface AnnotationSuppression {
  readonly checkId: string;
  readonly reason: string;
}

/** The object's ignore-check annotations: usable ones, and a finding for each unusable one. */
function readAnnotations(
  object: AnnotatedObject,
  knownCheckIds: ReadonlySet<string>
): { suppressions: AnnotationSuppression[]; problems: Finding[] } {
  const suppressions: AnnotationSuppression[] = [];
  const problems: Finding[] = [];
  for (const [key, value] of Object.entries(object.annotations)) {
    if (!key.startsWith(IGNORE_CHECK_ANNOTATION_PREFIX)) continue;
    const checkId = key.slice(IGNORE_CHECK_ANNOTATION_PREFIX.length);
    const reason = value.trim();
    if (knownCheckIds.has(checkId) && reason !== '') {
      suppressions.push({ checkId, reason });
      continue;
    }
    const problem = knownCheckIds.has(checkId)
      ? 'has no reason; say why the finding is accepted'
      : `names no check ("${checkId}" is not a check id)`;
    problems.push(annotationProblem(object.resource, key, checkId, problem));
  }
  return { suppressions, problems };
}

/**
 * An unusable annotation is reported under nodeclass-schema-valid (it reports the other scanner
 * annotations too) as an `error`: the finding it meant to accept is still reported.
 */
function annotationProblem(
  resource: ResourceRef,
  key: string,
  checkId: string,
  problem: string
): Finding {
  const path = formatPath(['metadata', 'annotations', key]);
  const meta = nodeClassSchemaValid;
  const evidence = { path, rule: 'ignore-check-annotation', annotation: key, checkId };
  return {
    id: findingId(meta.id, resource, `${path}#ignore-check-annotation`),
    checkId: meta.id,
    severity: meta.severity,
    status: 'error',
    resource,
    message: `Annotation ${key} ${problem}; it suppresses nothing.`,
    remediation: `Use ${IGNORE_CHECK_ANNOTATION_PREFIX}<check-id>: "<reason>" with a check id from \`nodeclass-scan checks\`, or remove the annotation.`,
    evidence,
    location: { path },
    materialHash: materialHash(
      { status: 'error', severity: meta.severity, evidence },
      meta.material
    ),
  };
}

export interface SuppressionOptions {
  readonly rules: readonly IgnoreRule[];
  readonly objects: readonly AnnotatedObject[];
  /** Scan time: rules whose `expires` has passed no longer apply. */
  readonly now: Date;
  /** The check catalog: the ids annotations may name, and each check's material evidence. */
  readonly catalog: readonly CheckMeta[];
}

/**
 * Marks each `fail`/`error` finding an annotation on its object or an unexpired rule accepts as
 * `suppressed` (the annotation wins when both do), and appends an `error` finding for each
 * unusable ignore-check annotation. Those findings are never suppressed themselves, so a typo in
 * an annotation cannot hide behind a broad rule.
 */
export function applySuppressions(
  findings: readonly Finding[],
  options: SuppressionOptions
): Finding[] {
  const knownCheckIds = new Set(options.catalog.map((check) => check.id));
  const annotations = new Map<string, AnnotationSuppression[]>();
  const problems = new Map<string, Finding>();
  for (const object of options.objects) {
    const read = readAnnotations(object, knownCheckIds);
    const key = resourceKey(object.resource);
    annotations.set(key, [...(annotations.get(key) ?? []), ...read.suppressions]);
    for (const problem of read.problems) problems.set(problem.id, problem);
  }
  const rules = options.rules.filter((rule) => !isExpired(rule, options.now));
  const material = new Map(options.catalog.map((check) => [check.id, check.material]));

  const suppressed = findings.map((finding): Finding => {
    if (finding.status !== 'fail' && finding.status !== 'error') return finding;
    const byAnnotation = annotations
      .get(resourceKey(finding.resource))
      ?.find((entry) => entry.checkId === finding.checkId);
    const byRule = rules.find(
      (rule) =>
        globMatches(rule.check, finding.checkId) && resourceMatches(rule.resource, finding.resource)
    );
    if (byAnnotation === undefined && byRule === undefined) return finding;
    const suppression =
      byAnnotation !== undefined
        ? { reason: byAnnotation.reason, source: 'annotation' as const, status: finding.status }
        : {
            reason: byRule?.reason ?? '',
            source: 'config' as const,
            status: finding.status,
            ...(byRule?.expires === undefined ? {} : { expires: byRule.expires }),
          };
    return {
      ...finding,
      status: 'suppressed',
      suppression,
      materialHash: materialHash(
        { status: 'suppressed', severity: finding.severity, evidence: finding.evidence },
        material.get(finding.checkId) ?? []
      ),
    };
  });
  // An object with an unusable annotation no longer passes nodeclass-schema-valid.
  const flagged = new Set([...problems.values()].map((problem) => resourceKey(problem.resource)));
  const kept = suppressed.filter(
    (finding) =>
      !(
        finding.status === 'pass' &&
        finding.checkId === nodeClassSchemaValid.id &&
        flagged.has(resourceKey(finding.resource))
      )
  );
  // Accepting a root does not accept what it blocks: its follow-ons stand on their own again.
  const suppressedIds = new Set(
    kept.filter((finding) => finding.status === 'suppressed').map((finding) => finding.id)
  );
  const unlinked = kept.map((finding) => {
    if (finding.causedBy === undefined || !suppressedIds.has(finding.causedBy)) return finding;
    const { causedBy: _root, ...standalone } = finding;
    return standalone;
  });
  return [...unlinked, ...problems.values()];
}
