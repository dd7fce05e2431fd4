import { isAbsolute, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type {
  Location,
  Log,
  MultiformatMessageString,
  ReportingDescriptor,
  Result,
  Suppression,
} from 'sarif';
import packageJson from '../../../package.json' with { type: 'json' };
import type { CheckMeta } from '../../core/check.js';
import { type Finding, originLabel, type Severity } from '../../core/model.js';
import type { ReportFinding, ScanReport } from '../../core/report.js';
import { checkDocPath, howToFixOf, publicUrlOf } from '../check-docs.js';
import { positionOf, type SourceIndex, STDIN_FILE, sourceOf } from './sources.js';

const SARIF_SCHEMA_URI = 'https://json.schemastore.org/sarif-2.1.0.json';
/** Key of our finding id in `partialFingerprints`: GitHub code scanning deduplicates on it. */
export const FINDING_FINGERPRINT = 'nodeclassScanFindingId/v1';
/** Artifact name of manifests read from standard input, unless `--stdin-name` gives one. */
const DEFAULT_STDIN_NAME = 'stdin';

const LEVELS: Readonly<Record<Severity, Result.level>> = {
  critical: 'error',
  high: 'error',
  medium: 'warning',
  low: 'note',
  info: 'note',
};

/**
 * GitHub code scanning reads `security-severity` (0.0–10.0) to rank alerts: over 9.0 is critical,
 * 7.0–8.9 high, 4.0–6.9 medium, 0.1–3.9 low.
 */
const SECURITY_SEVERITY: Readonly<Record<Severity, string>> = {
  critical: '9.5',
  high: '7.5',
  medium: '5.5',
  low: '3.0',
  info: '0.0',
};

/** With `--baseline`: how a result compares with the previous report, in SARIF's words. */
const BASELINE_STATES: Readonly<
  Record<NonNullable<ReportFinding['change']>, Result.baselineState>
> = { new: 'new', changed: 'updated', unchanged: 'unchanged' };

export interface SarifOptions {
  readonly checks: readonly CheckMeta[];
  readonly sources: SourceIndex;
  /** Base for the relative artifact URIs (the repository root in CI). */
  readonly cwd: string;
  readonly toolVersion: string;
  /** The artifact that stands for standard input (`--stdin-name`); `stdin` by default. */
  readonly stdinName?: string;
}

/**
 * A file path as a SARIF artifact URI: relative to `cwd` with `/` separators when the file is
 * below it (what GitHub code scanning expects), else an absolute `file:` URI.
 */
export function artifactUri(file: string, cwd: string): string {
  const absolute = resolve(cwd, file);
  const relativePath = relative(cwd, absolute);
  if (relativePath === '' || relativePath.startsWith('..') || isAbsolute(relativePath)) {
    return pathToFileURL(absolute).href;
  }
  return relativePath.split(sep).map(encodeURIComponent).join('/');
}

/**
 * Stable path for an object that has no manifest file (read from a cluster or a world file), so
 * GitHub can place the alert and keep it across runs whichever way the cluster was scanned:
 * `clusters/<cluster>/ec2nodeclasses/<name>.yaml`, `…/nodepools/<name>.yaml`, and
 * `clusters/<cluster>/cluster.yaml` for cluster-level findings (`clusters/cluster.yaml` when the
 * scan names no cluster, so the path never lands on a repository file at the root).
 */
export function pseudoPath(resource: Finding['resource']): string {
  const prefix =
    resource.cluster === '' ? 'clusters/' : `clusters/${encodeURIComponent(resource.cluster)}/`;
  switch (resource.kind) {
    case 'EC2NodeClass':
      return `${prefix}ec2nodeclasses/${encodeURIComponent(resource.name)}.yaml`;
    case 'NodePool':
      return `${prefix}nodepools/${encodeURIComponent(resource.name)}.yaml`;
    case 'Cluster':
      return `${prefix}cluster.yaml`;
  }
}

/**
 * A reference as a public link: `#NNNN` is an aws/karpenter-provider-aws issue, URLs are kept.
 * Anything else (notes that only make sense inside this project) is left out.
 */
export function referenceUrl(reference: string): string | undefined {
  return publicUrlOf(reference);
}

/** The repository's web address from package.json (`git+https://host/o/r.git` → `https://host/o/r`). */
export function repositoryWebUrl(repository: unknown): string | undefined {
  const raw =
    typeof repository === 'string'
      ? repository
      : typeof (repository as { url?: unknown } | undefined)?.url === 'string'
        ? (repository as { url: string }).url
        : undefined;
  const match = raw === undefined ? null : /^(?:git\+)?(https:\/\/[^\s]+?)(?:\.git)?$/.exec(raw);
  return match?.[1];
}

const REPOSITORY = repositoryWebUrl(packageJson.repository);

/** The rule's `helpUri`: the check's page in docs/checks/ on the repository's default branch. */
function helpUriOf(check: CheckMeta): string | undefined {
  return REPOSITORY === undefined ? undefined : `${REPOSITORY}/blob/main/${checkDocPath(check.id)}`;
}

function linkOf(reference: string, url: string): string {
  return reference.startsWith('#')
    ? `[aws/karpenter-provider-aws${reference}](${url})`
    : `<${url}>`;
}

/** Plain text as Markdown: `<name>` and `cluster/*` must not turn into HTML or emphasis. */
function markdownText(text: string): string {
  return text.replace(/[\\`*_[\]<>]/g, '\\$&');
}

function help(check: CheckMeta): MultiformatMessageString {
  const links = check.references.flatMap((reference) => {
    const url = referenceUrl(reference);
    return url === undefined ? [] : [{ url, markdown: linkOf(reference.trim(), url) }];
  });
  const severity = `Default severity: ${check.severity}. Checked from: ${check.inputs.join(', ')}.`;
  const docs = `Full guide with examples: ${checkDocPath(check.id)} in the nodeclass-scanner repository.`;
  const text = [
    `${check.title} (${check.id})`,
    `Why it matters: ${check.rationale}`,
    `How to fix: ${check.remediation}`,
    severity,
    docs,
    ...(links.length === 0 ? [] : [`References: ${links.map((link) => link.url).join(' ')}`]),
  ].join('\n\n');
  // The page's written "How to fix" (YAML, CLI) follows the summary; it is Markdown already.
  const guide = howToFixOf(check.id);
  const markdown = [
    `**${markdownText(check.title)}** (\`${check.id}\`)`,
    `**Why it matters:** ${markdownText(check.rationale)}`,
    `**How to fix:** ${markdownText(check.remediation)}`,
    ...(guide === undefined ? [] : [guide]),
    severity,
    `Full guide with examples: \`${checkDocPath(check.id)}\` in the nodeclass-scanner repository.`,
    ...(links.length === 0
      ? []
      : [`**References**\n\n${links.map((link) => `- ${link.markdown}`).join('\n')}`]),
  ].join('\n\n');
  return { text, markdown };
}

function rule(check: CheckMeta): ReportingDescriptor {
  const helpUri = helpUriOf(check);
  return {
    id: check.id,
    name: check.id,
    ...(helpUri === undefined ? {} : { helpUri }),
    shortDescription: { text: check.title },
    // What the rule checks and why; how to fix it is in `help`.
    fullDescription: { text: `${check.title}. ${check.rationale}` },
    help: help(check),
    defaultConfiguration: { level: LEVELS[check.severity] },
    properties: {
      'security-severity': SECURITY_SEVERITY[check.severity],
      severity: check.severity,
      group: check.group,
      inputs: [...check.inputs],
      references: check.references.flatMap((reference) => referenceUrl(reference) ?? []),
      tags: ['karpenter', 'EC2NodeClass', check.group],
    },
  };
}

function locationOf(finding: Finding, options: SarifOptions): Location {
  const { cluster, kind, name, origin } = finding.resource;
  // Same-named manifest objects are told apart by where they are.
  const qualified = [cluster, kind, name].filter((part) => part !== '').join('/');
  const logicalLocations = [
    {
      name,
      fullyQualifiedName: origin === undefined ? qualified : `${qualified}@${originLabel(origin)}`,
      kind: 'resource',
    },
  ];
  const source = sourceOf(options.sources, finding);
  // GitHub rejects an upload where any result lacks a file and a start line. Objects parsed from
  // a manifest (positions recorded) point into it; the others get their stable pseudo-path.
  if (!source?.positions) {
    return {
      physicalLocation: {
        artifactLocation: { uri: pseudoPath(finding.resource) },
        region: { startLine: 1 },
      },
      logicalLocations,
    };
  }
  const uri =
    source.file === STDIN_FILE
      ? artifactUri(options.stdinName ?? DEFAULT_STDIN_NAME, options.cwd)
      : artifactUri(source.file, options.cwd);
  const position = positionOf(source, finding.location?.path);
  return {
    physicalLocation: {
      artifactLocation: { uri },
      region: position
        ? { startLine: position.line, startColumn: position.column }
        : { startLine: 1 },
    },
    logicalLocations,
  };
}

function suppressionsOf(finding: Finding): Suppression[] {
  const { suppression } = finding;
  if (!suppression) return [];
  return [
    {
      // An annotation lives on the object itself; a config rule outside it.
      kind: suppression.source === 'annotation' ? 'inSource' : 'external',
      status: 'accepted',
      justification: suppression.reason,
      properties: {
        status: suppression.status,
        ...(suppression.expires === undefined ? {} : { expires: suppression.expires }),
      },
    },
  ];
}

function messageOf(finding: Finding, followOns: readonly Finding[]): string {
  const lines = [finding.message, `Remediation: ${finding.remediation}`];
  if (finding.suppression) {
    lines.push(`Suppressed (${finding.suppression.source}): ${finding.suppression.reason}`);
  }
  if (followOns.length > 0) {
    lines.push(
      `Because of this, could not check: ${followOns.map((followOn) => followOn.checkId).join(', ')}`
    );
  }
  return lines.join('\n');
}

function result(
  finding: ReportFinding,
  ruleIndex: number,
  followOns: readonly Finding[],
  options: SarifOptions
): Result {
  const suppressions = suppressionsOf(finding);
  // SARIF 2.1.0 (`result.kind`, `result.level`): a result that reports no problem has a `kind`
  // other than `fail`, and then its level SHALL be `none`.
  const level: Result.level = finding.status === 'notice' ? 'none' : LEVELS[finding.severity];
  return {
    ruleId: finding.checkId,
    ...(ruleIndex >= 0 ? { ruleIndex } : {}),
    ...(finding.status === 'notice' ? { kind: 'informational' as const } : {}),
    level,
    message: { text: messageOf(finding, followOns) },
    locations: [locationOf(finding, options)],
    partialFingerprints: { [FINDING_FINGERPRINT]: finding.id },
    ...(finding.change === undefined ? {} : { baselineState: BASELINE_STATES[finding.change] }),
    ...(suppressions.length === 0 ? {} : { suppressions }),
    properties: {
      status: finding.status,
      severity: finding.severity,
      ...(finding.location ? { path: finding.location.path } : {}),
      ...(followOns.length === 0
        ? {}
        : { followOns: followOns.map(({ id, checkId }) => ({ id, checkId })) }),
      evidence: finding.evidence,
    },
  };
}

const REPORTED = new Set<Finding['status']>(['fail', 'error', 'suppressed']);

/**
 * SARIF 2.1.0: rules from the registry; one result per `fail`, `error` or `suppressed` finding
 * (suppressed ones carry `suppressions`, so code scanning shows them as dismissed). A follow-on
 * finding is folded into its root's result: it never raises an alert of its own.
 *
 * Notices are complete results (`kind: informational`, `level: none`) kept in the run's property
 * bag (`properties.notices`), not in `results`: GitHub code scanning ignores `kind` and opens an
 * alert for every result, and a notice must not be an alert. Leaving `results` also closes the
 * alert an earlier version opened for the same finding (it reported notices as `fail`, level note).
 */
export function formatSarif(report: ScanReport, options: SarifOptions): string {
  const rules = options.checks.map(rule);
  const ruleIndex = new Map(options.checks.map((check, index) => [check.id, index]));
  const reported = report.findings.filter((finding) => REPORTED.has(finding.status));
  const notices = report.findings
    .filter((finding) => finding.status === 'notice')
    .map((finding) => result(finding, ruleIndex.get(finding.checkId) ?? -1, [], options));
  const reportedIds = new Set(reported.map((finding) => finding.id));
  const followOnsOf = new Map<string, Finding[]>();
  for (const finding of reported) {
    if (finding.causedBy === undefined || !reportedIds.has(finding.causedBy)) continue;
    followOnsOf.set(finding.causedBy, [...(followOnsOf.get(finding.causedBy) ?? []), finding]);
  }
  const log: Log = {
    $schema: SARIF_SCHEMA_URI,
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'nodeclass-scan',
            version: options.toolVersion,
            rules,
          },
        },
        invocations: [
          {
            executionSuccessful: report.summary.inputErrors.length === 0,
            endTimeUtc: report.scannedAt,
            toolExecutionNotifications: report.summary.inputErrors.map((inputError) => ({
              level: 'error',
              message: { text: `${inputError.source}: ${inputError.message}` },
            })),
          },
        ],
        results: reported
          .filter((finding) => finding.causedBy === undefined || !reportedIds.has(finding.causedBy))
          .map((finding) =>
            result(
              finding,
              ruleIndex.get(finding.checkId) ?? -1,
              followOnsOf.get(finding.id) ?? [],
              options
            )
          ),
        properties: {
          nodeClasses: report.summary.nodeClasses,
          notRun: report.summary.notRun.map((entry) => ({ ...entry })),
          ...(notices.length === 0 ? {} : { notices }),
        },
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}
