import * as z from 'zod';

// zod schemas for what the scanner reads from the Kubernetes API. Only the fields we use are
// typed; items of a list stay `unknown` and are parsed by the core schemas like any manifest.

export const ObjectListSchema = z.looseObject({
  items: z.array(z.unknown()),
  metadata: z.looseObject({ continue: z.string().optional() }).optional(),
});

/** `metav1.Status`, the body of API errors. */
export const StatusSchema = z.looseObject({
  kind: z.literal('Status'),
  message: z.string().optional(),
  reason: z.string().optional(),
  code: z.number().optional(),
});

const EnvVarSchema = z.looseObject({ name: z.string(), value: z.string().optional() });

export const ContainerSchema = z.looseObject({
  name: z.string(),
  image: z.string().optional(),
  env: z.array(EnvVarSchema).optional(),
});

export const DeploymentSchema = z.looseObject({
  metadata: z.looseObject({
    name: z.string(),
    namespace: z.string(),
    labels: z.record(z.string(), z.string()).optional(),
  }),
  spec: z.looseObject({
    template: z.looseObject({
      spec: z.looseObject({
        serviceAccountName: z.string().optional(),
        containers: z.array(ContainerSchema),
      }),
    }),
  }),
});

export const ServiceAccountSchema = z.looseObject({
  metadata: z.looseObject({
    name: z.string(),
    namespace: z.string().optional(),
    annotations: z.record(z.string(), z.string()).optional(),
  }),
});

export type Deployment = z.infer<typeof DeploymentSchema>;
export type Container = z.infer<typeof ContainerSchema>;

/**
 * `apiextensions.k8s.io/v1` CustomResourceDefinition: what telling one CRD from another needs.
 * The schema itself stays as read; the admission engine validates what it evaluates.
 */
export const CustomResourceDefinitionSchema = z.looseObject({
  apiVersion: z.literal('apiextensions.k8s.io/v1'),
  kind: z.literal('CustomResourceDefinition'),
  metadata: z.looseObject({ name: z.string() }),
  spec: z.looseObject({
    group: z.string(),
    versions: z.array(z.looseObject({ name: z.string(), served: z.boolean() })).min(1),
  }),
});
