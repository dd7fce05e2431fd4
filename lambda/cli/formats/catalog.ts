import type { CheckMeta } from '../../core/check.js';
import { terminalSafe } from '../terminal.js';

export const CATALOG_FORMATS = ['table', 'json'] as const;
export type CatalogFormat = (typeof CATALOG_FORMATS)[number];

/** A check's metadata as `checks --format json` prints it (also the head of `checks ID`). */
export function catalogEntry({
  id,
  severity,
  group,
  title,
  inputs,
  rationale,
  remediation,
  references,
}: CheckMeta) {
  return { id, severity, group, title, inputs, rationale, remediation, references };
}

function catalogJson(checks: readonly CheckMeta[]): string {
  return `${JSON.stringify(checks.map(catalogEntry), null, 2)}\n`;
}

function catalogTable(checks: readonly CheckMeta[]): string {
  const rows = [
    ['ID', 'SEVERITY', 'GROUP', 'INPUTS', 'TITLE', 'REFERENCES'],
    // Printed like any other table: a cell can neither act on the terminal nor break its row.
    ...checks.map((check) =>
      [
        check.id,
        check.severity,
        check.group,
        check.inputs.join(','),
        check.title,
        check.references.join(' '),
      ].map(terminalSafe)
    ),
  ];
  const widths = rows[0]?.map((_, column) =>
    Math.max(...rows.map((row) => (row[column] ?? '').length))
  );
  const lines = rows.map((row) =>
    row
      .map((cell, column) =>
        column === row.length - 1 ? cell : cell.padEnd(widths?.[column] ?? 0)
      )
      .join('  ')
      .trimEnd()
  );
  return `${lines.join('\n')}\n\n${checks.length} ${checks.length === 1 ? 'check' : 'checks'}\n`;
}

/** The check catalog (`nodeclass-scan checks`). */
export function formatCatalog(checks: readonly CheckMeta[], format: CatalogFormat): string {
  return format === 'json' ? catalogJson(checks) : catalogTable(checks);
}
