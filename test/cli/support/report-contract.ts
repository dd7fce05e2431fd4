import { z } from 'zod';
import { FINDING_STATUSES, SEVERITIES } from '../../../lambda/core/model.js';

const resource = z.strictObject({
  cluster: z.string(),
  kind: z.enum(['EC2NodeClass', 'NodePool', 'Cluster']),
  name: z.string(),
  /** Only on manifest objects that share cluster, kind and name with another scanned object. */
  origin: z
    .strictObject({
      file: z.string().min(1),
      document: z.number().int().nonnegative(),
      item: z.number().int().nonnegative().optional(),
    })
    .optional(),
});
const findingIdSchema = z.string().regex(/^[0-9a-f]{16}$/);

const counts = <K extends string>(keys: readonly K[]) =>
  z.strictObject(
    Object.fromEntries(keys.map((key) => [key, z.number().int().nonnegative()])) as Record<
      K,
      z.ZodNumber
    >
  );

/** The JSON report contract (README, "Output formats"), as users script against it. */
export const ReportContract = z.strictObject({
  version: z.literal(1),
  scannedAt: z.iso.datetime(),
  findings: z.array(
    z.strictObject({
      id: findingIdSchema,
      checkId: z.string().min(1),
      severity: z.enum(SEVERITIES),
      status: z.enum(FINDING_STATUSES),
      resource,
      message: z.string().min(1),
      remediation: z.string(),
      evidence: z.record(z.string(), z.unknown()),
      location: z.strictObject({ path: z.string() }).optional(),
      materialHash: z.string().regex(/^[0-9a-f]{16}$/),
      causedBy: findingIdSchema.optional(),
      // Set when the finding is an error because an input could not be read (docs/faults.md).
      readFault: z
        .strictObject({
          reason: z.enum([
            'access-denied',
            'not-found',
            'not-installed',
            'throttled',
            'unreachable',
            'timeout',
            'invalid-response',
            'unknown',
            'not-collected',
          ]),
          input: z.string().min(1),
        })
        .optional(),
      suppression: z
        .strictObject({
          reason: z.string().min(1),
          source: z.enum(['annotation', 'config']),
          status: z.enum(['fail', 'error']),
          expires: z.string().optional(),
        })
        .optional(),
      /** With --baseline, on `fail`/`error` findings only. */
      change: z.enum(['new', 'changed', 'unchanged']).optional(),
    })
  ),
  summary: z.strictObject({
    total: z.number().int().nonnegative(),
    byStatus: counts(FINDING_STATUSES),
    failuresBySeverity: counts(SEVERITIES),
    nodeClasses: z.number().int().nonnegative(),
    clusters: z.array(z.string()),
    notRun: z.array(z.strictObject({ checkId: z.string(), missingInputs: z.array(z.string()) })),
    inputErrors: z.array(z.strictObject({ source: z.string(), message: z.string() })),
  }),
  /** With --baseline: open there, no longer open now. */
  resolved: z
    .array(
      z.strictObject({
        id: findingIdSchema,
        checkId: z.string().min(1),
        resource,
        severity: z.enum(SEVERITIES),
        message: z.string(),
      })
    )
    .optional(),
});
