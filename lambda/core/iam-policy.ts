// IAM policy documents (role trust policies) parsed with zod, and the question the node-role check
// asks of them: may this service principal assume the role?
import * as z from 'zod';
import { IAM_ACTION, wildcardMatches } from './wildcard.js';

const stringOrList = z.union([z.string(), z.array(z.string())]);

const StatementSchema = z.looseObject({
  Sid: z.string().optional(),
  Effect: z.string(),
  Principal: z.union([z.literal('*'), z.record(z.string(), stringOrList)]).optional(),
  NotPrincipal: z.unknown().optional(),
  Action: stringOrList.optional(),
  NotAction: z.unknown().optional(),
  Condition: z.record(z.string(), z.unknown()).optional(),
});

const PolicyDocumentSchema = z.looseObject({
  Version: z.string().optional(),
  Statement: z.union([StatementSchema, z.array(StatementSchema)]),
});

export type PolicyStatement = z.infer<typeof StatementSchema>;

export interface PolicyDocument {
  readonly statements: readonly PolicyStatement[];
}

export type PolicyParseResult =
  | { readonly ok: true; readonly document: PolicyDocument }
  | { readonly ok: false; readonly error: string };

/** Parses a policy document; IAM returns trust policies URL-encoded, so both forms are accepted. */
export function parsePolicyDocument(text: string): PolicyParseResult {
  let json: unknown;
  try {
    const decoded = text.trimStart().startsWith('%') ? decodeURIComponent(text) : text;
    json = JSON.parse(decoded);
  } catch (error) {
    return {
      ok: false,
      error: `not JSON: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const result = PolicyDocumentSchema.safeParse(json);
  if (!result.success) {
    return { ok: false, error: result.error.issues.map((issue) => issue.message).join('; ') };
  }
  const statement = result.data.Statement;
  return { ok: true, document: { statements: Array.isArray(statement) ? statement : [statement] } };
}

function list(value: string | readonly string[] | undefined): readonly string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : value;
}

/** IAM action patterns are case-insensitive and use `*`/`?` wildcards. */
function actionMatches(patterns: readonly string[], action: string): boolean {
  return patterns.some((pattern) => wildcardMatches(pattern, action, IAM_ACTION));
}

function principalIncludesService(
  statement: PolicyStatement,
  services: readonly string[]
): boolean {
  const principal = statement.Principal;
  if (principal === undefined) return false;
  if (principal === '*') return true;
  if (list(principal.AWS).includes('*')) return true;
  return list(principal.Service).some((service) => services.includes(service));
}

export interface ServiceTrust {
  /** An Allow statement lets one of the services call `sts:AssumeRole`, and no Deny stops it. */
  readonly trusted: boolean;
  /** The allowing statement has conditions (the scanner does not evaluate them). */
  readonly conditional: boolean;
  readonly allowingSid?: string;
}

/** Whether the trust policy lets one of `services` (e.g. `ec2.amazonaws.com`) assume the role. */
export function trustsService(document: PolicyDocument, services: readonly string[]): ServiceTrust {
  const relevant = document.statements.filter(
    (statement) =>
      statement.NotPrincipal === undefined &&
      statement.NotAction === undefined &&
      actionMatches(list(statement.Action), 'sts:AssumeRole') &&
      principalIncludesService(statement, services)
  );
  const denied = relevant.some((statement) => statement.Effect === 'Deny' && !statement.Condition);
  const allow = relevant.find((statement) => statement.Effect === 'Allow');
  if (denied || allow === undefined) return { trusted: false, conditional: false };
  return {
    trusted: true,
    conditional: allow.Condition !== undefined && Object.keys(allow.Condition).length > 0,
    ...(allow.Sid ? { allowingSid: allow.Sid } : {}),
  };
}
