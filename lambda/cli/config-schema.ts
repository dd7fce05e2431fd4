// The JSON schema of the config file, shipped as schema/nodeclass-scanner.schema.json for editor
// completion and checks (`# yaml-language-server: $schema=…`). Built from the same table as the
// zod schema the scanner validates with (scan-settings.ts), and written by `npm run docs`; a test
// keeps the file current and checks both schemas agree.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CHECKS } from '../core/checks/index.js';
import { REPOSITORY_ROOT } from './check-docs.js';
import { jsonBlock } from './formats/wrap.js';
import { SETTINGS, settingJsonSchema } from './scan-settings.js';

export const CONFIG_SCHEMA_PATH = 'schema/nodeclass-scanner.schema.json';

/** A check id or a glob over them, as ignore rules and annotationSuppression take them. */
function checkOrGlob(description: string): Record<string, unknown> {
  return {
    description,
    anyOf: [
      { type: 'string', enum: CHECKS.map((check) => check.id) },
      { type: 'string', pattern: '^[a-z0-9*?][a-z0-9*?-]*$' },
    ],
  };
}

export function configJsonSchema(): Record<string, unknown> {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'https://unpkg.com/nodeclass-scanner/schema/nodeclass-scanner.schema.json',
    title: 'nodeclass-scanner config file (.nodeclass-scanner.yaml)',
    description:
      'Ignore rules, annotationSuppression and scan options (the flags of `nodeclass-scan scan` in camelCase; flags and NODECLASS_SCAN_* variables win). Paths are relative to this file. Choices are written in lower case here; the scanner accepts any case.',
    type: 'object',
    additionalProperties: false,
    properties: {
      ignore: {
        description: 'Findings accepted for a reason: suppressed, never failing the build.',
        anyOf: [
          { type: 'null' },
          {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['check', 'resource', 'reason'],
              properties: {
                check: checkOrGlob('A check id, or a glob such as ami-* or *.'),
                resource: {
                  description:
                    'A glob over cluster/Kind/name, each part matched apart: */EC2NodeClass/legacy-*.',
                  type: 'string',
                  pattern: '^[^/]+/[^/]+/[^/]+$',
                },
                reason: {
                  description: 'Why the finding is accepted.',
                  type: 'string',
                  minLength: 1,
                },
                expires: {
                  description:
                    'YYYY-MM-DD (through that day, UTC) or an ISO date-time with a zone; quote it or not.',
                  type: 'string',
                  pattern: '^\\d{4}-\\d{2}-\\d{2}(T.+)?$',
                },
              },
            },
          },
        ],
      },
      annotationSuppression: {
        description:
          'Whether ignore-check annotations may suppress: allow (default), deny, or the check ids (globs) they may suppress.',
        anyOf: [
          { type: 'string', enum: ['allow', 'deny'] },
          { type: 'array', minItems: 1, items: checkOrGlob('A check id or glob.') },
          { type: 'string', description: 'check ids or globs separated by commas' },
        ],
      },
      ...Object.fromEntries(SETTINGS.map((spec) => [spec.key, settingJsonSchema(spec.key)])),
    },
  };
}

/** The file's text: two-space JSON, lists of plain values on one line when they fit (as Biome). */
export function renderConfigJsonSchema(): string {
  return `${jsonBlock(configJsonSchema(), 0, 100, { breakMembers: false }).join('\n')}\n`;
}

/** Writes the shipped schema file; returns whether it changed. */
export async function updateConfigJsonSchema(
  path = join(REPOSITORY_ROOT, CONFIG_SCHEMA_PATH)
): Promise<boolean> {
  const rendered = renderConfigJsonSchema();
  const current = await readFile(path, 'utf8').catch(() => undefined);
  if (current === rendered) return false;
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, rendered);
  return true;
}
