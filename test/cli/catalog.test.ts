import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  CATALOG_END,
  CATALOG_START,
  README_PATH,
  renderCatalogMarkdown,
  withCatalog,
} from '../../lambda/cli/catalog.js';
import type { CheckMeta } from '../../lambda/core/check.js';
import { CHECKS } from '../../lambda/core/checks/index.js';

const sample: CheckMeta = {
  id: 'sample-check',
  title: 'Pipes | and <tags> are escaped',
  group: 'spec',
  severity: 'medium',
  inputs: ['spec', 'aws'],
  rationale: 'Karpenter launches nothing.',
  remediation: 'Line one\nline two.',
  material: [],
  references: ['#1234', 'https://example.com/doc', 'docs/checks/README.md'],
};

describe('README check catalog', () => {
  it('matches the registry (run `npm run docs` when this fails)', () => {
    const readme = readFileSync(README_PATH, 'utf8');
    expect(
      withCatalog(readme, CHECKS) === readme,
      'README.md check catalog is stale: run `npm run docs` and commit README.md'
    ).toBe(true);
  });

  it('renders one row per check, linking its page, escaping Markdown and linking references', () => {
    const table = renderCatalogMarkdown([sample]).split('\n');
    expect(table[0]).toBe('| ID | Severity | Inputs | What it checks | Remediation | References |');
    expect(table[2]).toBe(
      '| [`sample-check`](docs/checks/sample-check.md) | medium | spec, aws | Pipes \\| and &lt;tags> are escaped | Line one line two. | [#1234](https://github.com/aws/karpenter-provider-aws/issues/1234), <https://example.com/doc>, [docs/checks/README.md](docs/checks/README.md) |'
    );
  });

  it('replaces only the text between the markers', () => {
    const readme = `intro\n${CATALOG_START}\nold table\n${CATALOG_END}\noutro\n`;
    expect(withCatalog(readme, [sample])).toBe(
      `intro\n${CATALOG_START}\n${renderCatalogMarkdown([sample])}\n${CATALOG_END}\noutro\n`
    );
  });

  it('refuses a README without the markers', () => {
    expect(() => withCatalog('no markers', CHECKS)).toThrow(/catalog:start/);
  });
});
