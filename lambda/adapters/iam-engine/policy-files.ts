// Policy documents given on the command line (`scan --controller-policy FILE… [--permissions-boundary
// FILE]`): JSON or YAML, as written or as the tools that hold them export them. Untrusted input:
// read within a byte cap, parsed, validated against the identity-policy grammar, and refused with
// the file and the problem named. Template placeholders left over from CloudFormation or Terraform
// are refused too: an unrendered document would be simulated for resources named `${…}`.
// https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_grammar.html
import { basename } from 'node:path';
import { LineCounter, parseAllDocuments, visit } from 'yaml';
import * as z from 'zod';
import { formatPath } from '../../core/schema.js';
import { InputError } from '../../shared/errors.js';
import { readRegularFile } from '../files/read-input.js';
import type { PrincipalPolicyDocuments } from './simulate-principal-policy.js';

/** A policy is at most 10,240 characters in IAM; an export that holds one stays far below. */
const MAX_POLICY_FILE_BYTES = 256 * 1024;
/** A policy nests 6 levels (Statement, Condition, values) and an export 3 more. */
const MAX_NESTING = 32;

const names = z.union([z.string(), z.array(z.string()).min(1)]);
const conditionValue = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.array(z.union([z.string(), z.number(), z.boolean()])),
]);

const BASE_OPERATORS = [
  'StringEquals',
  'StringNotEquals',
  'StringEqualsIgnoreCase',
  'StringNotEqualsIgnoreCase',
  'StringLike',
  'StringNotLike',
  'NumericEquals',
  'NumericNotEquals',
  'NumericLessThan',
  'NumericLessThanEquals',
  'NumericGreaterThan',
  'NumericGreaterThanEquals',
  'DateEquals',
  'DateNotEquals',
  'DateLessThan',
  'DateLessThanEquals',
  'DateGreaterThan',
  'DateGreaterThanEquals',
  'Bool',
  'BinaryEquals',
  'IpAddress',
  'NotIpAddress',
  'ArnEquals',
  'ArnLike',
  'ArnNotEquals',
  'ArnNotLike',
];

/** IAM's condition operators, with the set prefixes and `IfExists` (names are case-insensitive). */
const OPERATOR = new RegExp(
  `^(?:(?:ForAnyValue:|ForAllValues:)?(?:${BASE_OPERATORS.join('|')})(?:IfExists)?|Null)$`,
  'i'
);
/** `service:Action`, wildcards allowed, or `*`. */
const ACTION = /^(?:\*|[A-Za-z0-9-]+:[A-Za-z0-9*?]+)$/;
/** An ARN (wildcards allowed) or `*`. */
const RESOURCE = /^(?:\*|arn:.+)$/;

const listOf = (value: string | readonly string[]) => (typeof value === 'string' ? [value] : value);

/** One statement of an identity policy (or a permissions boundary: the same grammar). */
const StatementSchema = z
  .looseObject({
    Sid: z.string().optional(),
    Effect: z.enum(['Allow', 'Deny']),
    Action: names.optional(),
    NotAction: names.optional(),
    Resource: names.optional(),
    NotResource: names.optional(),
    Condition: z.record(z.string(), z.record(z.string(), conditionValue)).optional(),
  })
  .superRefine((statement, context) => {
    const issue = (path: PropertyKey[], message: string) =>
      context.addIssue({ code: 'custom', path, message });
    if ('Principal' in statement || 'NotPrincipal' in statement) {
      issue(
        ['Principal' in statement ? 'Principal' : 'NotPrincipal'],
        'an identity policy names no principal (this is a trust or resource policy)'
      );
    }
    for (const [element, negated, pattern, what] of [
      ['Action', 'NotAction', ACTION, 'service:Action or *'],
      ['Resource', 'NotResource', RESOURCE, 'an ARN or *'],
    ] as const) {
      const given = statement[element] ?? statement[negated];
      if ((statement[element] === undefined) === (statement[negated] === undefined)) {
        issue([], `give exactly one of ${element} and ${negated}`);
        continue;
      }
      const key = statement[element] === undefined ? negated : element;
      listOf(given ?? []).forEach((value, index) => {
        if (!pattern.test(value)) {
          issue(typeof given === 'string' ? [key] : [key, index], `"${value}" is not ${what}`);
        }
      });
    }
    for (const operator of Object.keys(statement.Condition ?? {})) {
      if (!OPERATOR.test(operator)) {
        issue(['Condition', operator], `"${operator}" is not an IAM condition operator`);
      }
    }
  });

const PolicySchema = z.looseObject({
  Version: z.enum(['2012-10-17', '2008-10-17']).optional(),
  // One statement or a list; told apart first, so an issue names the statement's own field.
  Statement: z.unknown().refine((value) => value !== undefined, 'a policy needs a Statement'),
});

/** The document's issues: its own, then its statements' (each path from the document). */
function policyIssues(document: unknown): readonly z.core.$ZodIssue[] {
  const policy = PolicySchema.safeParse(document);
  if (!policy.success) return policy.error.issues;
  const { Statement: statement } = policy.data;
  const statements = Array.isArray(statement)
    ? z.array(StatementSchema).min(1, 'a policy needs a statement').safeParse(statement)
    : StatementSchema.safeParse(statement);
  return (statements.error?.issues ?? []).map((issue) => ({
    ...issue,
    path: ['Statement', ...issue.path],
  }));
}

/** JSON text, or URL-encoded JSON text (as IAM's API returns documents), parsed. */
function parseDocumentText(text: string): unknown {
  for (const candidate of [() => text, () => decodeURIComponent(text)]) {
    try {
      return JSON.parse(candidate());
    } catch {
      // Not this form.
    }
  }
  return undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The policy document inside what people export: a document (`{Version, Statement}`); an object
 * with `PolicyDocument` (CloudFormation `AWS::IAM::ManagedPolicy`/`Policy` properties, or
 * `aws iam get-role-policy` output), or such a resource with `Properties`; `aws iam
 * get-policy-version` output (`{PolicyVersion: {Document}}`); a document as a JSON string
 * (`terraform output -json`). Documents given as text may be URL-encoded.
 */
function policyDocumentOf(value: unknown): { document: unknown; at: string[] } | string {
  if (typeof value === 'string') {
    const parsed = parseDocumentText(value);
    return parsed === undefined
      ? 'a string that is not a policy document'
      : { document: parsed, at: [] };
  }
  if (!isRecord(value)) return 'not an object';
  const inner = (document: unknown, at: string[]) =>
    typeof document === 'string'
      ? { document: parseDocumentText(document) ?? document, at }
      : { document, at };
  if ('Statement' in value) return { document: value, at: [] };
  if (isRecord(value.PolicyVersion) && 'Document' in value.PolicyVersion) {
    return inner(value.PolicyVersion.Document, ['PolicyVersion', 'Document']);
  }
  if ('PolicyDocument' in value) return inner(value.PolicyDocument, ['PolicyDocument']);
  if (isRecord(value.Properties) && 'PolicyDocument' in value.Properties) {
    return inner(value.Properties.PolicyDocument, ['Properties', 'PolicyDocument']);
  }
  return `no Statement, PolicyDocument or PolicyVersion.Document (keys: ${Object.keys(value).slice(0, 5).join(', ') || 'none'})`;
}

/**
 * `${…}` that is not an IAM policy variable (`${aws:username}`, `${aws:PrincipalTag/team}`,
 * `${*}`, `${?}`, `${$}`: one service prefix and a colon): CloudFormation's `${AWS::Region}`,
 * `${ClusterName}`, `${Role.Arn}`, Terraform's `${var.cluster_name}`.
 */
const PLACEHOLDER = /\$\{([^}]*)\}/g;
const POLICY_VARIABLE = /^\s*(?:[*?$]|[A-Za-z0-9-]+:[^:].*)$/;

function placeholdersIn(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)]
    .filter((match) => !POLICY_VARIABLE.test(match[1] ?? ''))
    .map((match) => match[0]);
}

interface Found {
  readonly what: string;
  readonly path: readonly PropertyKey[];
}

/** Every leftover placeholder in keys and strings, and every long-form intrinsic (`Fn::Sub`). */
function templateLeftovers(value: unknown, path: readonly PropertyKey[] = []): Found[] {
  if (typeof value === 'string') {
    return placeholdersIn(value).map((what) => ({ what, path }));
  }
  if (Array.isArray(value)) {
    return value.flatMap((item, index) => templateLeftovers(item, [...path, index]));
  }
  if (!isRecord(value)) return [];
  return Object.entries(value).flatMap(([key, item]) => [
    ...(key === 'Ref' || key.startsWith('Fn::') ? [{ what: key, path: [...path, key] }] : []),
    ...placeholdersIn(key).map((what) => ({ what, path: [...path, key] })),
    ...templateLeftovers(item, [...path, key]),
  ]);
}

const RENDER_FIRST =
  'give the policy as deployed: render the template first (fill in its parameters and pseudo parameters such as AWS::AccountId), or export the deployed version with `aws iam get-policy-version`';

/**
 * True when brackets and braces nest deeper than `limit`: refused before parsing, whose recursion
 * such a file could exhaust. Those inside strings and comments count too (no quoting rule can be
 * trusted before the text is parsed), which only errs towards refusing a file no policy resembles.
 */
function nestingExceeds(text: string, limit: number): boolean {
  let depth = 0;
  for (const char of text) {
    if (char === '[' || char === '{') {
      depth += 1;
      if (depth > limit) return true;
    } else if (char === ']' || char === '}') depth = Math.max(0, depth - 1);
  }
  return false;
}

/** The single JSON or YAML value of the file; a syntax error or a CloudFormation tag is refused. */
function parseFileText(text: string, label: string): unknown {
  if (nestingExceeds(text, MAX_NESTING)) {
    throw new InputError(`${label}: nested more than ${MAX_NESTING} levels; not a policy document`);
  }
  const lines = new LineCounter();
  const documents = parseAllDocuments(text, {
    lineCounter: lines,
    prettyErrors: false,
    uniqueKeys: true,
  });
  const list = Array.isArray(documents) ? documents : [];
  const [first, ...rest] = list.filter((document) => document.contents !== null);
  for (const document of list) {
    const [error] = document.errors;
    if (error !== undefined) {
      const { line } = lines.linePos(error.pos[0]);
      throw new InputError(`${label}: not valid JSON or YAML (line ${line}): ${error.message}`);
    }
  }
  if (first === undefined) throw new InputError(`${label}: holds no policy document`);
  if (rest.length > 0) {
    throw new InputError(
      `${label}: holds ${rest.length + 1} YAML documents; give one policy per file (repeat --controller-policy)`
    );
  }
  const tags: string[] = [];
  visit(first, {
    Node(_key, node) {
      if (node.tag?.startsWith('!') && node.range !== undefined && node.range !== null) {
        tags.push(`${node.tag} (line ${lines.linePos(node.range[0]).line})`);
      }
    },
  });
  if (tags.length > 0) {
    throw new InputError(
      `${label}: CloudFormation function${tags.length > 1 ? 's' : ''} ${tags.slice(0, 3).join(', ')}${tags.length > 3 ? ' …' : ''} left in the document; ${RENDER_FIRST}`
    );
  }
  try {
    return first.toJS({ maxAliasCount: 100 });
  } catch (error) {
    // Aliases expanding past the count (a YAML alias bomb).
    throw new InputError(
      `${label}: not read (${error instanceof Error ? error.message : String(error)})`
    );
  }
}

/** Parses one file's text into its policy document's JSON text; refuses it naming the problem. */
export function parsePolicyFile(text: string, label: string): string {
  try {
    return documentOfFile(text, label);
  } catch (error) {
    // Block nesting (`- - - …`) deep enough to exhaust a walk over the parsed value.
    if (error instanceof RangeError) throw new InputError(`${label}: nested too deeply; not read`);
    throw error;
  }
}

function documentOfFile(text: string, label: string): string {
  const located = policyDocumentOf(parseFileText(text, label));
  if (typeof located === 'string') {
    throw new InputError(
      `${label}: not an IAM policy document (${located}); give {Version, Statement}, an object with PolicyDocument (CloudFormation properties) or aws iam get-policy-version output`
    );
  }
  const where = (path: readonly PropertyKey[]) => {
    const formatted = formatPath([...located.at, ...path]);
    return formatted === '' ? '(root)' : formatted;
  };
  const leftovers = templateLeftovers(located.document);
  const [firstLeftover] = leftovers;
  if (firstLeftover !== undefined) {
    const what = [...new Set(leftovers.map((found) => found.what))];
    throw new InputError(
      `${label}: template placeholder${what.length > 1 ? 's' : ''} ${what.slice(0, 4).join(', ')}${what.length > 4 ? ' …' : ''} left in the document (first at ${where(firstLeftover.path)}); ${RENDER_FIRST}`
    );
  }
  const problems = policyIssues(located.document);
  if (problems.length > 0) {
    const issues = problems.slice(0, 3).map((issue) => `${where(issue.path)}: ${issue.message}`);
    const more = problems.length > issues.length ? ' …' : '';
    throw new InputError(`${label}: not a valid identity policy: ${issues.join('; ')}${more}`);
  }
  return JSON.stringify(located.document);
}

function readReason(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory';
  return error instanceof Error ? error.message : String(error);
}

async function readPolicyFile(file: string, flag: string): Promise<string> {
  const label = `${flag} ${file}`;
  let text: string;
  try {
    text = await readRegularFile(file, MAX_POLICY_FILE_BYTES, { description: 'limit 256 KiB' });
  } catch (error) {
    if (error instanceof InputError) throw new InputError(`${label}: ${error.message}`);
    throw new InputError(`${label}: cannot read (${readReason(error)})`);
  }
  return parsePolicyFile(text, label);
}

/** Each file named by its base name, or by the path as given when two share one. */
function namesOf(files: readonly string[]): string[] {
  const bases = files.map((file) => basename(file));
  return files.map((file, index) =>
    bases.filter((base) => base === bases[index]).length > 1 ? file : (bases[index] ?? file)
  );
}

export interface PolicyFileOptions {
  /** `--controller-policy` files: the identity policies, in order. */
  readonly policies: readonly string[];
  /** `--permissions-boundary` file. */
  readonly boundary?: string;
}

/**
 * Reads and validates the files into the documents the engine evaluates (identity policies in the
 * order given, the boundary apart). Throws an InputError naming the first file that cannot be used.
 */
export async function readPolicyFiles(
  options: PolicyFileOptions
): Promise<PrincipalPolicyDocuments> {
  // A file given twice (a glob and a name) is one policy.
  const policies = [...new Set(options.policies)];
  const all = options.boundary === undefined ? policies : [...policies, options.boundary];
  const named = namesOf(all);
  const documents: { readonly name: string; readonly document: string }[] = [];
  for (const [index, file] of all.entries()) {
    const flag = index < policies.length ? '--controller-policy' : '--permissions-boundary';
    documents.push({ name: named[index] ?? file, document: await readPolicyFile(file, flag) });
  }
  const boundary = options.boundary === undefined ? undefined : documents.at(-1);
  return {
    identity: documents
      .slice(0, policies.length)
      .map((policy) => ({ ...policy, type: 'managed' as const })),
    ...(boundary === undefined ? {} : { boundary }),
  };
}
