import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';

const require = createRequire(import.meta.url);
const SCHEMA_PATH = require.resolve('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json');

// RFC 3339 date-time, as SARIF timestamps use.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i;

function isUri(value: string): boolean {
  return URL.canParse(value);
}

function isUriReference(value: string): boolean {
  // A relative reference is a URI once resolved against any base; spaces and the like are not allowed.
  return !/[\s<>"{}|\\^`]/.test(value) && URL.canParse(value, 'https://base.invalid/');
}

let validator: ValidateFunction | undefined;

/**
 * The official SARIF 2.1.0 schema, compiled with Ajv. It is written for JSON Schema draft-04, whose
 * only construct Ajv's draft-07 mode does not read is the root `id`; it is renamed to `$id`.
 */
export function sarifValidator(): ValidateFunction {
  if (validator) return validator;
  const {
    id,
    $schema: _draft04,
    ...schema
  } = JSON.parse(readFileSync(SCHEMA_PATH, 'utf8')) as {
    id: string;
    $schema: string;
  } & Record<string, unknown>;
  // The schema's `language` pattern is not valid with the `u` flag (a stray `]`), so no unicode mode.
  const ajv = new Ajv({ strict: false, allErrors: true, unicodeRegExp: false });
  ajv.addFormat('uri', isUri);
  ajv.addFormat('uri-reference', isUriReference);
  ajv.addFormat(
    'date-time',
    (value: string) => DATE_TIME.test(value) && !Number.isNaN(Date.parse(value))
  );
  validator = ajv.compile({ ...schema, $id: id });
  return validator;
}

/** Schema errors of a SARIF document, as readable strings (empty when valid). */
export function sarifErrors(document: unknown): string[] {
  const validate = sarifValidator();
  if (validate(document)) return [];
  return (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ''}`);
}
