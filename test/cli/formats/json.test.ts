import { describe, expect, it } from 'vitest';
import { writeReport } from '../../../lambda/cli/formats/index.js';
import { formatJson, jsonChunks } from '../../../lambda/cli/formats/json.js';
import type { ScanReport } from '../../../lambda/core/report.js';
import { aFinding, aReport, nodeClass } from './fixtures.js';

const FINDINGS = [
  aFinding({ checkId: 'ami-exists', resource: nodeClass('default', 'prod') }),
  aFinding({
    checkId: 'node-role-policies',
    severity: 'high',
    message: 'line one\nline two "quoted" \u001b[2J',
    resource: nodeClass('legacy', 'prod'),
  }),
];

describe('JSON report', () => {
  it('is JSON.stringify with two-space indent, byte for byte, in one piece per finding', () => {
    for (const report of [aReport(FINDINGS), aReport([])]) {
      const chunks = [...jsonChunks(report)];
      expect(chunks.join('')).toBe(`${JSON.stringify(report, null, 2)}\n`);
      expect(chunks.length).toBeGreaterThan(report.findings.length);
    }
  });

  it('holds no two findings in one piece', () => {
    const chunks = [...jsonChunks(aReport(FINDINGS))];
    const withFinding = chunks.filter((chunk) => chunk.includes('"checkId"'));
    expect(withFinding).toHaveLength(FINDINGS.length);
  });

  it('keeps arrays other than findings, and leaves out keys JSON leaves out', () => {
    const report = {
      ...aReport(FINDINGS),
      resolved: [{ id: 'a', checkId: 'ami-exists' }],
      extra: undefined,
    } as unknown as ScanReport;
    expect(formatJson(report)).toBe(`${JSON.stringify(report, null, 2)}\n`);
  });

  it('writes through the given writer in pieces', () => {
    const pieces: string[] = [];
    writeReport(aReport(FINDINGS), 'json', {} as never, (text) => pieces.push(text));
    expect(pieces.length).toBeGreaterThan(2);
    expect(JSON.parse(pieces.join(''))).toEqual(JSON.parse(formatJson(aReport(FINDINGS))));
  });
});
