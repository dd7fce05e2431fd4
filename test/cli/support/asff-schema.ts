// ASFF's required attributes and the formats and limits of the optional ones this scanner writes,
// written from AWS's documentation:
// https://docs.aws.amazon.com/securityhub/latest/userguide/asff-required-attributes.html
// https://docs.aws.amazon.com/securityhub/latest/userguide/asff-top-level-attributes.html
// https://docs.aws.amazon.com/securityhub/latest/userguide/securityhub-findings-format-type-taxonomy.html
import { z } from 'zod';

/** ISO 8601 date-time as Security Hub accepts it (RFC 3339 with a zone). */
const timestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/)
  .refine((value) => !Number.isNaN(Date.parse(value)), 'not a date');

const nonEmpty = (max: number) => z.string().min(1).max(max);

const TYPE_NAMESPACES = [
  'Software and Configuration Checks',
  'TTPs',
  'Effects',
  'Unusual Behaviors',
  'Sensitive Data Identifications',
];

/** `namespace/category/classifier`, the namespace from the taxonomy. */
const findingType = z
  .string()
  .max(128)
  .refine((value) => {
    const parts = value.split('/');
    return parts.length >= 1 && parts.length <= 3 && TYPE_NAMESPACES.includes(parts[0] ?? '');
  }, 'not namespace/category/classifier with a documented namespace');

const severityLabel = z.enum(['INFORMATIONAL', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL']);

export const AsffFindingSchema = z
  .object({
    SchemaVersion: z.literal('2018-10-08'),
    Id: nonEmpty(512),
    ProductArn: z
      .string()
      .regex(/^arn:aws(-[a-z-]+)?:securityhub:[a-z0-9-]+:\d{12}:product\/[^/]+\/[^/]+$/),
    GeneratorId: nonEmpty(512),
    AwsAccountId: z.string().regex(/^\d{12}$/),
    Types: z.array(findingType).min(1).max(50),
    CreatedAt: timestamp,
    UpdatedAt: timestamp,
    FirstObservedAt: timestamp.optional(),
    LastObservedAt: timestamp.optional(),
    Severity: z.object({ Label: severityLabel, Original: z.string().max(64).optional() }),
    Title: nonEmpty(256),
    Description: nonEmpty(1024),
    Resources: z
      .array(
        z.object({
          Type: nonEmpty(256),
          Id: nonEmpty(512),
          Partition: z.enum(['aws', 'aws-cn', 'aws-us-gov']).optional(),
          Region: z.string().max(16).optional(),
          Details: z
            .object({
              AwsEksCluster: z.object({ Name: z.string(), Arn: z.string() }).optional(),
              Other: z.record(z.string().max(128), z.string().max(1024)).optional(),
            })
            .optional(),
        })
      )
      .min(1)
      .max(32),
    Compliance: z
      .object({ Status: z.enum(['PASSED', 'WARNING', 'FAILED', 'NOT_AVAILABLE']) })
      .optional(),
    RecordState: z.enum(['ACTIVE', 'ARCHIVED']).optional(),
    Workflow: z
      .object({ Status: z.enum(['NEW', 'NOTIFIED', 'RESOLVED', 'SUPPRESSED']) })
      .optional(),
    Remediation: z
      .object({
        Recommendation: z.object({ Text: z.string().max(512), Url: z.url() }),
      })
      .optional(),
    ProductFields: z
      .record(z.string().max(128), z.string().max(2048))
      .refine((fields) => Object.keys(fields).length <= 50, 'more than 50 product fields')
      .optional(),
    ProductName: z.string().optional(),
    CompanyName: z.string().optional(),
    Region: z.string().optional(),
    FindingProviderFields: z
      .object({
        Severity: z.object({ Label: severityLabel, Original: z.string().optional() }).optional(),
        Types: z.array(findingType).max(50).optional(),
      })
      .optional(),
  })
  .strict()
  .refine((finding) => Date.parse(finding.UpdatedAt) >= Date.parse(finding.CreatedAt), {
    message: 'UpdatedAt is before CreatedAt',
  })
  .refine((finding) => new TextEncoder().encode(JSON.stringify(finding)).length <= 240 * 1024, {
    message: 'finding larger than 240 KB',
  });

/** Issues of each invalid finding of a `--format asff` list (empty when every one is valid). */
export function asffErrors(findings: unknown): string[] {
  const list = z.array(z.unknown()).safeParse(findings);
  if (!list.success) return ['not a JSON list'];
  return list.data.flatMap((finding, index) => {
    const parsed = AsffFindingSchema.safeParse(finding);
    return parsed.success
      ? []
      : parsed.error.issues.map((issue) => `[${index}] ${issue.path.join('.')}: ${issue.message}`);
  });
}
