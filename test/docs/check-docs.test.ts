import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CHECK_DOCS_DIR,
  checkDocProblems,
  checkDocsProblems,
  GENERATED_END,
  GENERATED_START,
  howToFixOf,
  isRepositoryDoc,
  publicUrlOf,
  REPOSITORY_ROOT,
  renderGeneratedBlock,
  renderIndex,
  renderSkeleton,
  updateCheckDocs,
} from '../../lambda/cli/check-docs.js';
import type { CheckMeta } from '../../lambda/core/check.js';
import { CHECKS } from '../../lambda/core/checks/index.js';

const sample: CheckMeta = {
  id: 'sample-check',
  title: 'A sample holds',
  group: 'spec',
  severity: 'medium',
  inputs: ['spec'],
  rationale: 'Karpenter launches nothing.',
  remediation: 'Fix the sample.',
  references: ['#1234'],
  material: ['key'],
};

const written = (check: CheckMeta) =>
  `${renderGeneratedBlock(check)}

## What it checks

The sample.

## Why launches fail

Because.

## How to fix

\`\`\`yaml
spec: {}
\`\`\`

## References

- <https://karpenter.sh/docs/concepts/nodeclasses/>
- [All checks](README.md)
`;

describe('docs/checks/ in this repository', () => {
  it('has one complete, fresh page per check and no page of an unknown check (`npm run docs`)', async () => {
    expect(await checkDocsProblems(CHECKS)).toEqual([]);
  });

  it('check references are public URLs, #NNNN upstream issues, or existing docs/ pages', () => {
    for (const check of CHECKS) {
      expect(check.references.length, check.id).toBeGreaterThan(0);
      for (const reference of check.references) {
        const resolves =
          publicUrlOf(reference) !== undefined ||
          (isRepositoryDoc(reference) && existsSync(join(REPOSITORY_ROOT, reference)));
        expect(resolves, `${check.id}: ${reference}`).toBe(true);
      }
    }
  });
});

describe('check page validation', () => {
  const file = join(CHECK_DOCS_DIR, 'sample-check.md');

  it('accepts a written page with a fresh block', () => {
    expect(checkDocProblems(sample, written(sample), file)).toEqual([]);
  });

  it('reports a stale generated block after the metadata changed', () => {
    const changed = { ...sample, severity: 'critical' as const };
    expect(checkDocProblems(changed, written(sample), file)).toEqual([
      'docs/checks/sample-check.md: the generated block is stale (run `npm run docs`)',
    ]);
  });

  it('reports missing markers', () => {
    const doc = written(sample).replace(GENERATED_START, '').replace(GENERATED_END, '');
    expect(checkDocProblems(sample, doc, file)).toContain(
      'docs/checks/sample-check.md: the generated block markers are missing'
    );
  });

  it('reports a missing section and accepts "Why it matters" for "Why launches fail"', () => {
    const withoutFix = written(sample).replace('## How to fix', '## Fixing');
    expect(checkDocProblems(sample, withoutFix, file)).toEqual([
      'docs/checks/sample-check.md: section "## How to fix" is missing',
    ]);
    const matters = written(sample).replace('## Why launches fail', '## Why it matters');
    expect(checkDocProblems(sample, matters, file)).toEqual([]);
  });

  it('treats a skeleton section (only a hint comment) as empty', () => {
    const problems = checkDocProblems(sample, renderSkeleton(sample), file);
    expect(problems).toEqual([
      'docs/checks/sample-check.md: section "## What it checks" is empty',
      'docs/checks/sample-check.md: section "## Why launches fail" is empty',
      'docs/checks/sample-check.md: section "## How to fix" is empty',
      'docs/checks/sample-check.md: section "## References" is empty',
    ]);
  });

  it.each([
    ['karpenter-validations §2.3', 'karpenter-validations'],
    ['section §2.3', '§'],
    ['see ARCHITECTURE.md', 'ARCHITECTURE.md'],
    ['aws-facts', 'aws-facts'],
  ])('rejects an internal reference: %s', (text, found) => {
    const doc = written(sample).replace('Because.', `Because (${text}).`);
    expect(checkDocProblems(sample, doc, file)).toEqual([
      `docs/checks/sample-check.md: cites a document outside the repository ("${found}")`,
    ]);
  });

  it('rejects links to missing files and non-https URLs', () => {
    const doc = written(sample)
      .replace('(README.md)', '(missing-page.md)')
      .replace('The sample.', 'The [sample](http://example.com).');
    expect(checkDocProblems(sample, doc, file)).toEqual([
      'docs/checks/sample-check.md: link http://example.com is not an https URL',
      'docs/checks/sample-check.md: link missing-page.md points at no file',
    ]);
  });
});

describe('updateCheckDocs', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'check-docs-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('creates a skeleton and the index, which still fail until the sections are written', async () => {
    expect(await updateCheckDocs([sample], dir)).toEqual([
      'docs/checks/sample-check.md (new skeleton: write its sections)',
      'docs/checks/README.md',
    ]);
    expect(await readFile(join(dir, 'sample-check.md'), 'utf8')).toBe(renderSkeleton(sample));
    expect(await readFile(join(dir, 'README.md'), 'utf8')).toBe(renderIndex([sample]));
    expect(await checkDocsProblems([sample], dir)).toHaveLength(4);
  });

  it('refreshes only the generated block and keeps the written sections', async () => {
    await writeFile(join(dir, 'sample-check.md'), written(sample));
    const changed = { ...sample, title: 'A renamed sample holds' };
    await updateCheckDocs([changed], dir);
    expect(await readFile(join(dir, 'sample-check.md'), 'utf8')).toBe(written(changed));
    expect(await checkDocsProblems([changed], dir)).toEqual([]);
    expect(await updateCheckDocs([changed], dir)).toEqual([]);
  });

  it('gives the How to fix of a page for SARIF help, and nothing without a page', async () => {
    await writeFile(join(dir, 'sample-check.md'), written(sample));
    expect(howToFixOf('sample-check', dir)).toBe('```yaml\nspec: {}\n```');
    expect(howToFixOf('no-such-check', dir)).toBeUndefined();
  });

  it('reports a page that documents no check', async () => {
    await updateCheckDocs([], dir);
    await writeFile(join(dir, 'removed-check.md'), written(sample));
    expect(await checkDocsProblems([], dir)).toEqual([
      'docs/checks/removed-check.md: documents no check (remove or rename it)',
    ]);
  });
});

describe('publicUrlOf', () => {
  it('expands upstream issue numbers and keeps https URLs only', () => {
    expect(publicUrlOf('#8072')).toBe('https://github.com/aws/karpenter-provider-aws/issues/8072');
    expect(publicUrlOf('https://karpenter.sh/docs/')).toBe('https://karpenter.sh/docs/');
    expect(publicUrlOf('karpenter-validations §2.3')).toBeUndefined();
    expect(publicUrlOf('pkg/apis/crds/x.yaml')).toBeUndefined();
  });
});
