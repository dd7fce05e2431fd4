import type { AsffTarget } from '../../core/asff.js';
import type { CheckMeta } from '../../core/check.js';
import type { ScanReport } from '../../core/report.js';
import { asffChunks, formatAsff } from './asff.js';
import { type DisplayFilter, filterReport } from './display-filter.js';
import { formatJson, jsonChunks } from './json.js';
import { formatJunit } from './junit.js';
import { formatSarif } from './sarif.js';
import type { SourceIndex } from './sources.js';
import { formatTable } from './table.js';

export const OUTPUT_FORMATS = ['table', 'json', 'sarif', 'junit', 'asff'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface FormatOptions {
  /** Colour the table (stdout is a TTY and NO_COLOR is not set). */
  readonly color: boolean;
  /** The check registry (SARIF rules). */
  readonly checks: readonly CheckMeta[];
  /** Where each scanned object came from (file and line positions). */
  readonly sources: SourceIndex;
  /** Base directory for relative file references (SARIF artifact URIs). */
  readonly cwd: string;
  /** The scanner's version (SARIF tool driver). */
  readonly toolVersion: string;
  /** The artifact name that stands for standard input in SARIF (`--stdin-name`). */
  readonly stdinName?: string;
  /** The account and region ASFF findings are imported in (`--format asff` only). */
  readonly asffTarget?: AsffTarget;
  /** Columns the table wraps to. */
  readonly width?: number;
  /** `--quiet`: the table without pass counts and summary line. */
  readonly quiet?: boolean;
  /** `--severity`/`--status`: the findings shown, in every format (summaries count them all). */
  readonly filter?: DisplayFilter;
}

function asffTargetOf(options: FormatOptions): AsffTarget {
  if (options.asffTarget === undefined) throw new Error('--format asff needs an asffTarget');
  return options.asffTarget;
}

function formatReport(report: ScanReport, format: OutputFormat, options: FormatOptions): string {
  switch (format) {
    case 'json':
      return formatJson(report);
    case 'sarif':
      return formatSarif(report, options);
    case 'junit':
      return formatJunit(report);
    case 'table':
      return formatTable(report, options);
    case 'asff':
      return formatAsff(report, asffTargetOf(options), options.checks);
  }
}

/**
 * Writes the report to `write`: JSON in pieces (one per finding), other formats whole. The table
 * filters what it shows itself (its summary counts the whole scan); the other formats get the
 * findings the filter shows, with the summary of the whole scan.
 */
export function writeReport(
  whole: ScanReport,
  format: OutputFormat,
  options: FormatOptions,
  write: (text: string) => void
): void {
  const report = format === 'table' ? whole : filterReport(whole, options.filter);
  if (format === 'json') {
    for (const chunk of jsonChunks(report)) write(chunk);
    return;
  }
  if (format === 'asff') {
    for (const chunk of asffChunks(report, asffTargetOf(options), options.checks)) write(chunk);
    return;
  }
  write(formatReport(report, format, options));
}
