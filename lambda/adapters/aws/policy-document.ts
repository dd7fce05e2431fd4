// An IAM policy document in a world file (a role's inline policy, a managed policy version, an
// SCP): plain JSON text, URL-encoded JSON as IAM returns it, or a JSON object. Parsed to the
// shape the policy grammar requires of every statement, and kept as JSON text: what IAM returns,
// decoded, so the world's documents compare equal to the ones a live read gives.
// https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_grammar.html
import * as z from 'zod';

const StatementSchema = z.looseObject({
  Sid: z.string().optional(),
  Effect: z.enum(['Allow', 'Deny']),
  /** Operator → condition key → value(s). */
  Condition: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
});

const PolicySchema = z.looseObject({
  Version: z.string().optional(),
  // One statement or a list; checked apart so an issue names the statement's own field.
  Statement: z.unknown().refine((value) => value !== undefined, 'a policy needs a Statement'),
});

/** The JSON text of a plain or URL-encoded document; undefined when it is neither. */
function jsonText(document: string): string | undefined {
  for (const candidate of [document, () => decodeURIComponent(document)]) {
    try {
      const text = typeof candidate === 'string' ? candidate : candidate();
      JSON.parse(text);
      return text;
    } catch {
      // Not this form.
    }
  }
  return undefined;
}

export const PolicyDocumentSchema = z
  .union([z.string(), z.record(z.string(), z.unknown())])
  .transform((value, context) => {
    const text = typeof value === 'string' ? jsonText(value) : JSON.stringify(value);
    if (text === undefined) {
      context.addIssue({
        code: 'custom',
        message: 'not a policy document (JSON text, URL-encoded JSON or a JSON object)',
      });
      return z.NEVER;
    }
    const policy = PolicySchema.safeParse(JSON.parse(text));
    const statement = policy.success ? policy.data.Statement : undefined;
    const statements = Array.isArray(statement)
      ? z.array(StatementSchema).safeParse(statement)
      : StatementSchema.safeParse(statement);
    const issues = policy.success
      ? statements.error?.issues.map((issue) => ({ ...issue, path: ['Statement', ...issue.path] }))
      : policy.error.issues;
    for (const issue of issues ?? []) {
      context.addIssue({ code: 'custom', message: issue.message, path: [...issue.path] });
    }
    return issues === undefined ? text : z.NEVER;
  });
