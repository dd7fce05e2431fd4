import type { ScanReport } from '../../core/report.js';
import { formatJson } from './json.js';

export const OUTPUT_FORMATS = ['table', 'json', 'sarif', 'junit'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface FormatOptions {
  /** Colour the table (stdout is a TTY and NO_COLOR is not set). */
  readonly color: boolean;
}

export function formatReport(
  report: ScanReport,
  format: OutputFormat,
  _options: FormatOptions
): string {
  switch (format) {
    case 'json':
      return formatJson(report);
    default:
      return formatJson(report);
  }
}
