import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Log } from 'sarif';
import { describe, expect, it } from 'vitest';
import { EXIT_FINDINGS } from '../../lambda/cli/main.js';
import { runCliCaptured } from './support/run-cli.js';
import { sarifErrors } from './support/sarif-schema.js';
import { findAll, parseXml } from './support/strict-xml.js';

const ROOT = join(import.meta.dirname, '..', '..');
const NODECLASSES = 'examples/nodeclasses';

// The README's first command, `nodeclass-scan scan examples/`, in the CI formats.
describe('scan examples/ --format sarif|junit', () => {
  it('emits schema-valid SARIF with results on every broken example file and none on the good one', async () => {
    // Act
    const run = await runCliCaptured(['scan', join(ROOT, 'examples'), '--format', 'sarif'], {
      cwd: ROOT,
    });
    // Assess
    expect(run.code).toBe(EXIT_FINDINGS);
    expect(run.stderr).toBe('');
    const log = JSON.parse(run.stdout) as Log;
    expect(sarifErrors(log)).toEqual([]);
    const flagged = new Set(
      (log.runs[0]?.results ?? []).map(
        (result) => result.locations?.[0]?.physicalLocation?.artifactLocation?.uri
      )
    );
    const files = readdirSync(join(ROOT, NODECLASSES)).map((file) => `${NODECLASSES}/${file}`);
    const broken = files.filter((file) => !file.endsWith('good-al2023.yaml'));
    expect(broken.filter((file) => !flagged.has(file))).toEqual([]);
    expect(flagged.has(`${NODECLASSES}/good-al2023.yaml`)).toBe(false);
  });

  it('emits well-formed JUnit with failures for broken NodeClasses and none for the good one', async () => {
    const run = await runCliCaptured(['scan', join(ROOT, 'examples'), '--format', 'junit']);
    const root = parseXml(run.stdout);
    const suites = findAll(root, 'testsuite');
    const good = suites.find((suite) => suite.attributes.name === 'default-al2023');
    expect(good?.attributes.failures).toBe('0');
    expect(good?.attributes.errors).toBe('0');
    expect(Number(root.attributes.failures)).toBeGreaterThan(0);
  });
});
