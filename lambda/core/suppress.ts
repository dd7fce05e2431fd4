// Accepting a finding: an annotation on the object (`ignore-check.nodeclass-scanner/<check-id>`,
// as kube-linter's `ignore-check.kube-linter.io/<check>`) or an `ignore` rule of the CLI config
// file / CDK configuration. A suppressed finding stays in every report with status `suppressed`
// and its reason; it never alerts and never fails a build. Only `fail` and `error` are suppressed.
import { z } from 'zod';
import type { CheckMeta } from './check.js';
import { nodeClassSchemaValid } from './checks/nodeclass-schema-valid.js';
import type { Inventory } from './inventory.js';
import { materialHash } from './material.js';
import { type Finding, findingId, type ResourceKind, type ResourceRef } from './model.js';
import { formatPath } from './schema.js';

export const IGNORE_CHECK_ANNOTATION_PREFIX = 'ignore-check.nodeclass-scanner/';

/** One config rule. Validated by `ignoreRulesSchema` before use. */
export interface IgnoreRule {
  /** A check id, or a glob over check ids (`*` every check). */
  readonly check: string;
  /** A glob over `cluster/Kind/name`, e.g. `*\/EC2NodeClass/legacy-*`. */
  readonly resource: string;
  readonly reason: string;
  /** `YYYY-MM-DD` (through that day, UTC) or an ISO date-time with zone (through that instant). */
  readonly expires?: string;
}

/** An object's annotations, keyed by the resource its findings are reported on. */
export interface AnnotatedObject {
  readonly resource: ResourceRef;
  readonly annotations: Readonly<Record<string, string>>;
}

const RESOURCE_KINDS: readonly ResourceKind[] = ['EC2NodeClass', 'NodePool', 'Cluster'];

/**
 * `*` matches any run of characters, `?` exactly one. Greedy two-pointer match that only ever
 * returns to the last `*`: at most |pattern|·|text| steps, never exponential like a backtracking
 * regex on patterns such as `*a*a*a*b`.
 */
export function globMatches(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let starText = 0;
  while (t < text.length) {
    const token = pattern[p];
    if (token === '*') {
      star = p;
      starText = t;
      p += 1;
    } else if (token !== undefined && (token === '?' || token === text[t])) {
      p += 1;
      t += 1;
    } else if (star !== -1) {
      p = star + 1;
      starText += 1;
      t = starText;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p += 1;
  return p === pattern.length;
}

/** Matched segment by segment, so a `*` never spans the `/` between cluster, kind and name. */
export function resourceMatches(pattern: string, resource: ResourceRef): boolean {
  const parts = pattern.split('/');
  if (parts.length !== 3) return false;
  const [cluster = '', kind = '', name = ''] = parts;
  return (
    globMatches(cluster, resource.cluster) &&
    globMatches(kind, resource.kind) &&
    globMatches(name, resource.name)
  );
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,3})?)?(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

function isCalendarDate(year: string, month: string, day: string): boolean {
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  return (
    date.getUTCFullYear() === Number(year) &&
    date.getUTCMonth() === Number(month) - 1 &&
    date.getUTCDate() === Number(day)
  );
}

/**
 * The first instant at which a rule with this `expires` no longer applies, or undefined when the
 * text is not a date. A date covers its whole day in UTC; a date-time covers up to that instant.
 */
export function expiryInstant(expires: string): number | undefined {
  const date = DATE.exec(expires);
  if (date) {
    const [, year = '', month = '', day = ''] = date;
    if (!isCalendarDate(year, month, day)) return undefined;
    return Date.UTC(Number(year), Number(month) - 1, Number(day) + 1);
  }
  const dateTime = DATE_TIME.exec(expires);
  if (dateTime) {
    const [, year = '', month = '', day = ''] = dateTime;
    if (!isCalendarDate(year, month, day)) return undefined;
    return Date.parse(expires) + 1;
  }
  return undefined;
}

/** True once `now` is past the rule's `expires`; a rule without one never expires. */
export function isExpired(rule: Pick<IgnoreRule, 'expires'>, now: Date): boolean {
  if (rule.expires === undefined) return false;
  const instant = expiryInstant(rule.expires);
  return instant === undefined || now.getTime() >= instant;
}

/**
 * The `ignore` list, validated against the check catalog: a check id (or glob) that names no
 * check, a resource glob that is not `cluster/Kind/name`, a missing reason or an unreadable
 * `expires` is an issue on that rule's field.
 */
export function ignoreRulesSchema(knownCheckIds: readonly string[]) {
  // Each field validates itself, so every problem of a rule is reported at once.
  const text = (what: string) =>
    z
      .string({
        error: (issue) => (issue.input === undefined ? `required: ${what}` : `expected ${what}`),
      })
      .trim()
      .min(1, `required: ${what}`);
  const rule = z.strictObject({
    check: text('a check id (see `nodeclass-scan checks`) or a glob such as *').refine(
      (check) => knownCheckIds.some((id) => globMatches(check, id)),
      {
        error: (issue) =>
          `unknown check id "${String(issue.input)}" (see \`nodeclass-scan checks\`)`,
      }
    ),
    resource: text('a glob over cluster/Kind/name such as */EC2NodeClass/legacy-*').superRefine(
      (resource, context) => {
        const parts = resource.split('/');
        const kind = parts[1] ?? '';
        if (parts.length !== 3 || parts.some((part) => part === '')) {
          context.addIssue({
            code: 'custom',
            message: `"${resource}" is not cluster/Kind/name (use * for any part, e.g. */EC2NodeClass/legacy-*)`,
          });
        } else if (!RESOURCE_KINDS.some((known) => globMatches(kind, known))) {
          context.addIssue({
            code: 'custom',
            message: `"${kind}" matches no kind (${RESOURCE_KINDS.join(', ')})`,
          });
        }
      }
    ),
    reason: text('the reason the finding is accepted'),
    expires: text('a date (YYYY-MM-DD) or an ISO date-time with a zone')
      .refine((expires) => expiryInstant(expires) !== undefined, {
        error: (issue) =>
          `"${String(issue.input)}" is not a date (YYYY-MM-DD) or an ISO date-time with a zone`,
      })
      .optional(),
  });
  return z.array(rule);
}

/** `ignore[2].check` style, for messages that name the rule. */
export function issuePath(root: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (out, segment) =>
      typeof segment === 'number' ? `${out}[${segment}]` : `${out}.${String(segment)}`,
    root
  );
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
 * The annotations of every EC2NodeClass and NodePool. A NodeClass's are read from its raw object,
 * so an object that fails the schema can still accept its schema findings.
 */
export function annotatedObjectsOf(
  inventory: Pick<Inventory, 'nodeClasses' | 'nodePools'>
): AnnotatedObject[] {
  const nodeClasses = inventory.nodeClasses.map((entry) => {
    const parsed = MetadataSchema.safeParse(entry.raw);
    return {
      resource: { cluster: entry.cluster, kind: 'EC2NodeClass' as const, name: entry.name },
      annotations: stringValues(parsed.success ? parsed.data.metadata.annotations : {}),
    };
  });
  const nodePools = inventory.nodePools.map((entry) => ({
    resource: { cluster: entry.cluster, kind: 'NodePool' as const, name: entry.name },
    annotations: entry.parsed.ok ? { ...(entry.parsed.value.metadata.annotations ?? {}) } : {},
  }));
  return [...nodeClasses, ...nodePools];
}

function refKey(resource: ResourceRef): string {
  return [resource.cluster, resource.kind, resource.name].join('\u0000');
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
    const key = refKey(object.resource);
    annotations.set(key, [...(annotations.get(key) ?? []), ...read.suppressions]);
    for (const problem of read.problems) problems.set(problem.id, problem);
  }
  const rules = options.rules.filter((rule) => !isExpired(rule, options.now));
  const material = new Map(options.catalog.map((check) => [check.id, check.material]));

  const suppressed = findings.map((finding): Finding => {
    if (finding.status !== 'fail' && finding.status !== 'error') return finding;
    const byAnnotation = annotations
      .get(refKey(finding.resource))
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
  return [...suppressed, ...problems.values()];
}
