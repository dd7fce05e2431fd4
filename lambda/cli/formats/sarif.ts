import { isAbsolute, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Location, Log, ReportingDescriptor, Result } from 'sarif';
import type { CheckMeta } from '../../core/check.js';
import type { Finding, Severity } from '../../core/model.js';
import type { ScanReport } from '../../core/report.js';
import { positionOf, type SourceIndex, sourceOf } from './sources.js';

export const SARIF_SCHEMA_URI = 'https://json.schemastore.org/sarif-2.1.0.json';
/** Key of our finding id in `partialFingerprints`: GitHub code scanning deduplicates on it. */
export const FINDING_FINGERPRINT = 'nodeclassScanFindingId/v1';

const LEVELS: Readonly<Record<Severity, Result.level>> = {
  critical: 'error',
  high: 'error',
  medium: 'warning',
  low: 'note',
  info: 'note',
};

export interface SarifOptions {
  readonly checks: readonly CheckMeta[];
  readonly sources: SourceIndex;
  /** Base for the relative artifact URIs (the repository root in CI). */
  readonly cwd: string;
  readonly toolVersion: string;
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

function rule(check: CheckMeta): ReportingDescriptor {
  return {
    id: check.id,
    shortDescription: { text: check.title },
    help: { text: check.remediation },
    defaultConfiguration: { level: LEVELS[check.severity] },
    properties: {
      severity: check.severity,
      group: check.group,
      inputs: [...check.inputs],
      references: [...check.references],
      tags: ['karpenter', 'EC2NodeClass'],
    },
  };
}

function locationsOf(finding: Finding, options: SarifOptions): Location[] {
  const { cluster, kind, name } = finding.resource;
  const logical: Location = {
    logicalLocations: [
      {
        name,
        fullyQualifiedName: [cluster, kind, name].filter((part) => part !== '').join('/'),
        kind: 'resource',
      },
    ],
  };
  const source = sourceOf(options.sources, finding);
  // Standard input has no artifact a viewer could open.
  if (!source || source.file === '<stdin>' || source.file === '-') return [logical];
  const position = positionOf(source, finding.location?.path);
  return [
    {
      physicalLocation: {
        artifactLocation: { uri: artifactUri(source.file, options.cwd) },
        ...(position ? { region: { startLine: position.line, startColumn: position.column } } : {}),
      },
      ...logical,
    },
  ];
}

function result(finding: Finding, ruleIndex: number, options: SarifOptions): Result {
  return {
    ruleId: finding.checkId,
    ...(ruleIndex >= 0 ? { ruleIndex } : {}),
    level: LEVELS[finding.severity],
    message: { text: `${finding.message}\nRemediation: ${finding.remediation}` },
    locations: locationsOf(finding, options),
    partialFingerprints: { [FINDING_FINGERPRINT]: finding.id },
    properties: {
      status: finding.status,
      severity: finding.severity,
      ...(finding.location ? { path: finding.location.path } : {}),
      evidence: finding.evidence,
    },
  };
}

/** SARIF 2.1.0: rules from the registry, one result per `fail` or `error` finding. */
export function formatSarif(report: ScanReport, options: SarifOptions): string {
  const rules = options.checks.map(rule);
  const ruleIndex = new Map(options.checks.map((check, index) => [check.id, index]));
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
        results: report.findings
          .filter((finding) => finding.status === 'fail' || finding.status === 'error')
          .map((finding) => result(finding, ruleIndex.get(finding.checkId) ?? -1, options)),
        properties: {
          nodeClasses: report.summary.nodeClasses,
          notRun: report.summary.notRun.map((entry) => ({ ...entry })),
        },
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}
