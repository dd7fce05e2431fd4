// Accepting a finding: an annotation on the object (`ignore-check.nodeclass-scanner/<check-id>`,
// as kube-linter's `ignore-check.kube-linter.io/<check>`) or an `ignore` rule of the CLI config
// file / CDK configuration. A suppressed finding stays in every report with status `suppressed`
// and its reason; it never alerts and never fails a build. Only `fail` and `error` are suppressed.
// An annotation's value is its reason, optionally ending in `; expires=<date>`; whether annotations
// may suppress at all is the `annotationSuppression` policy (annotation-policy.ts).
import * as z from 'zod';
import {
  type AnnotationSuppression,
  annotationSuppressionAllows,
  DEFAULT_ANNOTATION_SUPPRESSION,
} from './annotation-policy.js';
import { type CheckMeta, nodeClassRef, nodePoolRef } from './check.js';
import { nodeClassSchemaValid } from './checks/nodeclass-schema-valid.js';
import { toFinding } from './evaluate.js';
import {
  expiryInstant,
  globMatches,
  type IgnoreRule,
  isExpired,
  resourceMatches,
} from './ignore-rules.js';
import type { Inventory } from './inventory.js';
import { materialHash } from './material.js';
import { type Finding, type ResourceRef, resourceKey } from './model.js';
import { formatPath } from './schema.js';
import { didYouMean } from './suggest.js';
import { elideText, FINDING_TEXT_BUDGET, utf8Length } from './text-budget.js';

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

interface AnnotationEntry {
  /** The annotation's key, `ignore-check.nodeclass-scanner/<check-id>`. */
  readonly key: string;
  readonly checkId: string;
  readonly reason: string;
  /** From `; expires=<date>`: a date (through that day, UTC) or an ISO date-time with a zone. */
  readonly expires?: string;
}

/** What follows the last `;` of a value that ends in an expiry (spaces around `=` allowed). */
const EXPIRY_SUFFIX = /^\s*expires\s*=\s*(\S*)\s*$/;

/**
 * An annotation value: the reason, and the expiry when the value ends in `; expires=<date>`. A
 * value without that suffix is all reason, as before expiries existed. Split at the last `;`
 * (no backtracking over the value: annotations are the cluster's text, up to 256 KiB).
 */
export function parseAnnotationValue(value: string): {
  readonly reason: string;
  readonly expires?: string;
} {
  const split = value.lastIndexOf(';');
  const match = split < 0 ? null : EXPIRY_SUFFIX.exec(value.slice(split + 1));
  if (match === null) return { reason: value.trim() };
  return { reason: value.slice(0, split).trim(), expires: match[1] ?? '' };
}

/** The object's ignore-check annotations: usable ones, and a finding for each unusable one. */
function readAnnotations(
  object: AnnotatedObject,
  knownCheckIds: ReadonlySet<string>
): { entries: AnnotationEntry[]; problems: Finding[] } {
  const entries: AnnotationEntry[] = [];
  const problems: Finding[] = [];
  for (const [key, value] of Object.entries(object.annotations)) {
    if (!key.startsWith(IGNORE_CHECK_ANNOTATION_PREFIX)) continue;
    const checkId = key.slice(IGNORE_CHECK_ANNOTATION_PREFIX.length);
    const parsed = parseAnnotationValue(value);
    // The reason travels with the finding (reports, Security Hub): bounded like its message.
    const reason = elideText(parsed.reason, FINDING_TEXT_BUDGET.message);
    const { expires } = parsed;
    const readableExpiry = expires === undefined || expiryInstant(expires) !== undefined;
    if (knownCheckIds.has(checkId) && reason !== '' && readableExpiry) {
      entries.push({ key, checkId, reason, ...(expires === undefined ? {} : { expires }) });
      continue;
    }
    const problem = !knownCheckIds.has(checkId)
      ? `names no check ("${checkId}" is not a check id${didYouMean(checkId, [...knownCheckIds]).replace(/^ \((.*)\)$/, '; $1')})`
      : reason === ''
        ? 'has no reason; say why the finding is accepted'
        : `has an unreadable expiry "${elideText(expires ?? '', 64)}" (write "<reason>; expires=YYYY-MM-DD" or an ISO date-time with a zone)`;
    problems.push(annotationProblem(object.resource, key, checkId, problem));
  }
  return { entries, problems };
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
  return toFinding(nodeClassSchemaValid, {
    status: 'error',
    resource,
    message: `Annotation ${key} ${problem}; it suppresses nothing.`,
    remediation: `Use ${IGNORE_CHECK_ANNOTATION_PREFIX}<check-id>: "<reason>" (or "<reason>; expires=YYYY-MM-DD") with a check id from \`nodeclass-scan checks\`, or remove the annotation.`,
    evidence: { path, rule: 'ignore-check-annotation', annotation: key, checkId },
    discriminator: `${path}#ignore-check-annotation`,
    location: { path },
  });
}

export interface SuppressionOptions {
  readonly rules: readonly IgnoreRule[];
  readonly objects: readonly AnnotatedObject[];
  /** Scan time: rules whose `expires` has passed no longer apply. */
  readonly now: Date;
  /** The check catalog: the ids annotations may name, and each check's material evidence. */
  readonly catalog: readonly CheckMeta[];
  /** Whether annotations may suppress, and of which checks (default `allow`). */
  readonly annotationSuppression?: AnnotationSuppression | undefined;
  /** What refused an annotation, as the finding's message names it (default: the setting). */
  readonly annotationSuppressionSetting?: string | undefined;
}

/** Why an annotation on the finding's object did not suppress it. */
type AnnotationNotApplied = 'refused' | 'expired';

/**
 * The finding an annotation tried to suppress and could not (refused by the policy, or expired):
 * it stays open, and its message and evidence (`annotationSuppression`, not material: the finding
 * is the same) say which annotation, its reason, and why it did not apply.
 */
function withAnnotationNote(
  finding: Finding,
  entry: AnnotationEntry,
  outcome: AnnotationNotApplied,
  setting: string
): Finding {
  const reason = elideText(entry.reason, 300);
  const note =
    outcome === 'refused'
      ? `The annotation ${entry.key} ("${reason}") tried to suppress this finding; refused: ${setting} does not let annotations suppress ${entry.checkId}, so it stays open.`
      : `The suppression by the annotation ${entry.key} ("${reason}") expired ${entry.expires ?? ''}; the finding is reported again.`;
  return {
    ...finding,
    // The note is kept whole: the check's own text gives way if the budget is tight.
    message: `${elideText(finding.message, FINDING_TEXT_BUDGET.message - utf8Length(note) - 1)} ${note}`,
    evidence: {
      ...finding.evidence,
      annotationSuppression: {
        annotation: entry.key,
        reason,
        ...(entry.expires === undefined ? {} : { expires: entry.expires }),
        outcome,
      },
    },
  };
}

/**
 * Marks each `fail`/`error` finding an unexpired annotation on its object (that the
 * `annotationSuppression` policy allows) or an unexpired rule accepts as `suppressed` (the
 * annotation wins when both do), and appends an `error` finding for each unusable ignore-check
 * annotation. Those findings are never suppressed themselves, so a typo in an annotation cannot
 * hide behind a broad rule. A finding whose annotation was refused or has expired, and that no
 * rule accepts, stays open and says so (`withAnnotationNote`).
 */
export function applySuppressions(
  findings: readonly Finding[],
  options: SuppressionOptions
): Finding[] {
  const knownCheckIds = new Set(options.catalog.map((check) => check.id));
  const annotations = new Map<string, AnnotationEntry[]>();
  const problems = new Map<string, Finding>();
  for (const object of options.objects) {
    const read = readAnnotations(object, knownCheckIds);
    const key = resourceKey(object.resource);
    annotations.set(key, [...(annotations.get(key) ?? []), ...read.entries]);
    for (const problem of read.problems) problems.set(problem.id, problem);
  }
  const rules = options.rules.filter((rule) => !isExpired(rule, options.now));
  const material = new Map(options.catalog.map((check) => [check.id, check.material]));
  const policy = options.annotationSuppression ?? DEFAULT_ANNOTATION_SUPPRESSION;
  const setting = options.annotationSuppressionSetting ?? 'the annotationSuppression setting';

  const suppressed = findings.map((finding): Finding => {
    if (finding.status !== 'fail' && finding.status !== 'error') return finding;
    const annotation = annotations
      .get(resourceKey(finding.resource))
      ?.find((entry) => entry.checkId === finding.checkId);
    const notApplied: AnnotationNotApplied | undefined =
      annotation === undefined
        ? undefined
        : isExpired(annotation, options.now)
          ? 'expired'
          : annotationSuppressionAllows(policy, finding.checkId)
            ? undefined
            : 'refused';
    const byAnnotation = notApplied === undefined ? annotation : undefined;
    const byRule = rules.find(
      (rule) =>
        globMatches(rule.check, finding.checkId) && resourceMatches(rule.resource, finding.resource)
    );
    if (byAnnotation === undefined && byRule === undefined) {
      return annotation === undefined || notApplied === undefined
        ? finding
        : withAnnotationNote(finding, annotation, notApplied, setting);
    }
    const suppression =
      byAnnotation !== undefined
        ? {
            reason: byAnnotation.reason,
            source: 'annotation' as const,
            status: finding.status,
            ...(byAnnotation.expires === undefined ? {} : { expires: byAnnotation.expires }),
          }
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
