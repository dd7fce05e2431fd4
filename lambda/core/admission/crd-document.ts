import * as z from 'zod';

// The parts of an apiextensions.k8s.io/v1 CustomResourceDefinition the API server uses to admit a
// custom resource: https://kubernetes.io/docs/reference/kubernetes-api/extend-resources/custom-resource-definition-v1/
// Untrusted input (a cluster, a world file, a manifest): parsed with zod, unknown keys ignored.

export interface ValidationRuleDoc {
  readonly rule: string;
  readonly message?: string | undefined;
  readonly messageExpression?: string | undefined;
  readonly fieldPath?: string | undefined;
  readonly optionalOldSelf?: boolean | undefined;
}

/** JSONSchemaProps as the CRD spells it (only the keys that take part in admission). */
export interface SchemaDoc {
  readonly type?: string | undefined;
  readonly format?: string | undefined;
  readonly default?: unknown;
  readonly nullable?: boolean | undefined;
  readonly enum?: readonly unknown[] | undefined;
  readonly pattern?: string | undefined;
  readonly maximum?: number | undefined;
  readonly exclusiveMaximum?: boolean | undefined;
  readonly minimum?: number | undefined;
  readonly exclusiveMinimum?: boolean | undefined;
  readonly multipleOf?: number | undefined;
  readonly maxLength?: number | undefined;
  readonly minLength?: number | undefined;
  readonly maxItems?: number | undefined;
  readonly minItems?: number | undefined;
  readonly maxProperties?: number | undefined;
  readonly minProperties?: number | undefined;
  readonly required?: readonly string[] | undefined;
  readonly items?: SchemaDoc | undefined;
  readonly properties?: Readonly<Record<string, SchemaDoc>> | undefined;
  readonly additionalProperties?: SchemaDoc | boolean | undefined;
  readonly allOf?: readonly SchemaDoc[] | undefined;
  readonly anyOf?: readonly SchemaDoc[] | undefined;
  readonly oneOf?: readonly SchemaDoc[] | undefined;
  readonly not?: SchemaDoc | undefined;
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean | undefined;
  readonly 'x-kubernetes-embedded-resource'?: boolean | undefined;
  readonly 'x-kubernetes-int-or-string'?: boolean | undefined;
  readonly 'x-kubernetes-list-type'?: string | undefined;
  readonly 'x-kubernetes-list-map-keys'?: readonly string[] | undefined;
  readonly 'x-kubernetes-validations'?: readonly ValidationRuleDoc[] | undefined;
}

const count = z.number().int().nonnegative();

const ValidationRuleSchema = z.object({
  rule: z.string(),
  message: z.string().optional(),
  messageExpression: z.string().optional(),
  fieldPath: z.string().optional(),
  optionalOldSelf: z.boolean().optional(),
});

// A map whose keys are user data (`__proto__` is an ordinary property name in a schema).
function recordOf<T>(value: z.ZodType<T>) {
  return z
    .custom<Record<string, unknown>>(
      (raw) => typeof raw === 'object' && raw !== null && !Array.isArray(raw)
    )
    .transform((raw, context) => {
      const out: Record<string, T> = Object.create(null);
      for (const [key, entry] of Object.entries(raw)) {
        const parsed = value.safeParse(entry);
        if (!parsed.success) {
          for (const issue of parsed.error.issues) {
            context.addIssue({ ...issue, path: [key, ...issue.path] } as never);
          }
          continue;
        }
        out[key] = parsed.data;
      }
      return out;
    });
}

const SchemaDocSchema: z.ZodType<SchemaDoc> = z.lazy(() =>
  z.object({
    type: z.string().optional(),
    format: z.string().optional(),
    default: z.unknown().optional(),
    nullable: z.boolean().optional(),
    enum: z.array(z.unknown()).optional(),
    pattern: z.string().optional(),
    maximum: z.number().optional(),
    exclusiveMaximum: z.boolean().optional(),
    minimum: z.number().optional(),
    exclusiveMinimum: z.boolean().optional(),
    multipleOf: z.number().positive().optional(),
    maxLength: count.optional(),
    minLength: count.optional(),
    maxItems: count.optional(),
    minItems: count.optional(),
    maxProperties: count.optional(),
    minProperties: count.optional(),
    required: z.array(z.string()).optional(),
    items: SchemaDocSchema.optional(),
    properties: recordOf(SchemaDocSchema).optional(),
    additionalProperties: z.union([z.boolean(), SchemaDocSchema]).optional(),
    allOf: z.array(SchemaDocSchema).optional(),
    anyOf: z.array(SchemaDocSchema).optional(),
    oneOf: z.array(SchemaDocSchema).optional(),
    not: SchemaDocSchema.optional(),
    'x-kubernetes-preserve-unknown-fields': z.boolean().optional(),
    'x-kubernetes-embedded-resource': z.boolean().optional(),
    'x-kubernetes-int-or-string': z.boolean().optional(),
    'x-kubernetes-list-type': z.enum(['atomic', 'set', 'map']).optional(),
    'x-kubernetes-list-map-keys': z.array(z.string()).optional(),
    'x-kubernetes-validations': z.array(ValidationRuleSchema).optional(),
  })
);

const CrdVersionSchema = z.object({
  name: z.string().min(1),
  served: z.boolean(),
  storage: z.boolean(),
  schema: z.object({ openAPIV3Schema: SchemaDocSchema }).optional(),
  subresources: z.object({ status: z.unknown().optional() }).optional(),
});

const CrdSchema = z.object({
  apiVersion: z.literal('apiextensions.k8s.io/v1', {
    error: 'must be apiextensions.k8s.io/v1 (v1beta1 CRDs are not served since Kubernetes 1.22)',
  }),
  kind: z.literal('CustomResourceDefinition'),
  spec: z.object({
    group: z.string().min(1),
    names: z.object({ kind: z.string().min(1) }),
    scope: z.enum(['Cluster', 'Namespaced']).optional(),
    versions: z.array(CrdVersionSchema).min(1),
  }),
});

export interface CrdVersionDoc {
  readonly name: string;
  readonly served: boolean;
  readonly schema: SchemaDoc | undefined;
  /** With a status subresource the main resource's status is not written (nor validated) on create. */
  readonly statusSubresource: boolean;
}

export interface ParsedCrd {
  readonly group: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly versions: readonly CrdVersionDoc[];
}

/** The CRD, or why it cannot be used ("spec.versions[0].schema…: expected number"). */
export function parseCrdDocument(
  document: unknown
): { readonly crd: ParsedCrd } | { readonly error: string } {
  const parsed = CrdSchema.safeParse(document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.map((segment) => String(segment)).join('.') ?? '';
    return { error: `${where === '' ? '' : `${where}: `}${issue?.message ?? 'invalid'}` };
  }
  const { spec } = parsed.data;
  return {
    crd: {
      group: spec.group,
      kind: spec.names.kind,
      namespaced: spec.scope !== 'Cluster',
      versions: spec.versions.map((version) => ({
        name: version.name,
        served: version.served,
        schema: version.schema?.openAPIV3Schema,
        statusSubresource: version.subresources?.status !== undefined,
      })),
    },
  };
}
