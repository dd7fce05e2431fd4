// Minimal CustomResourceDefinitions shaped like Karpenter's (same group, names and served version,
// so the scanner finds them), written for these tests: only the properties the tests read. And a
// stand-in for the admission engine that applies the one default these tests need.
import type { LoadAdmission } from '../../lambda/app/admission.js';
import type {
  AdmissionVerdict,
  CrdAdmission,
  CrdDocument,
} from '../../lambda/core/admission/types.js';

/** A tiny EC2NodeClass CRD; `ipv6Default: false` is the isolated-region workaround (default removed). */
export function aNodeClassCrd(options: { ipv6Default?: boolean } = {}): Record<string, unknown> {
  const ipv6Default = options.ipv6Default ?? true;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: 'ec2nodeclasses.karpenter.k8s.aws',
      managedFields: [{ manager: 'helm' }],
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"big":"copy"}' },
    },
    spec: {
      group: 'karpenter.k8s.aws',
      names: { kind: 'EC2NodeClass', plural: 'ec2nodeclasses' },
      scope: 'Cluster',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    metadataOptions: {
                      type: 'object',
                      ...(ipv6Default ? { default: { httpProtocolIPv6: 'disabled' } } : {}),
                      properties: {
                        httpProtocolIPv6: {
                          type: 'string',
                          enum: ['disabled', 'enabled'],
                          ...(ipv6Default ? { default: 'disabled' } : {}),
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
    status: { acceptedNames: { kind: 'EC2NodeClass' } },
  };
}

export function aNodePoolCrd(): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'nodepools.karpenter.sh' },
    spec: {
      group: 'karpenter.sh',
      names: { kind: 'NodePool', plural: 'nodepools' },
      scope: 'Cluster',
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: {} } }],
    },
  };
}

type Json = Record<string, unknown>;

/** The metadataOptions defaults of a test CRD (object default, then the field's own). */
function metadataOptionsDefaults(document: unknown): { object?: Json; ipv6?: string } {
  const versions = ((document as Json).spec as Json).versions as Json[];
  const schema = (versions[0]?.schema as Json | undefined)?.openAPIV3Schema as Json | undefined;
  const spec = (schema?.properties as Json | undefined)?.spec as Json | undefined;
  const options = (spec?.properties as Json | undefined)?.metadataOptions as Json | undefined;
  const ipv6 = ((options?.properties as Json | undefined)?.httpProtocolIPv6 as Json | undefined)
    ?.default;
  return {
    ...(options?.default === undefined ? {} : { object: options.default as Json }),
    ...(typeof ipv6 === 'string' ? { ipv6 } : {}),
  };
}

/**
 * A test double of the engine: serves `v1` only and applies the metadataOptions defaults the
 * test CRD declares. `loads` counts how often each CRD was loaded.
 */
export function fakeAdmissionEngine(options: { failOn?: string } = {}) {
  const loads: string[] = [];
  const load: LoadAdmission = async (crd: CrdDocument) => {
    loads.push(`${crd.name} ${crd.origin.location}`);
    if (options.failOn === crd.name) return { error: 'rule 3 uses an unknown CEL function' };
    const defaults = metadataOptionsDefaults(crd.document);
    const label = `${crd.name} from ${crd.origin.location}`;
    const admission: CrdAdmission = {
      crd: label,
      review(object: unknown): AdmissionVerdict {
        const raw = object as Json;
        const spec = { ...((raw.spec as Json | undefined) ?? {}) };
        if (crd.name === 'ec2nodeclasses.karpenter.k8s.aws') {
          const given = spec.metadataOptions as Json | undefined;
          const options = given ?? defaults.object;
          if (options !== undefined) {
            spec.metadataOptions = {
              ...options,
              ...(options.httpProtocolIPv6 === undefined && defaults.ipv6 !== undefined
                ? { httpProtocolIPv6: defaults.ipv6 }
                : {}),
            };
          }
        }
        const served = String(raw.apiVersion).endsWith('/v1');
        return {
          crd: label,
          version: 'v1',
          violations: served
            ? []
            : [{ path: 'apiVersion', rule: 'served', message: `${raw.apiVersion} is not served` }],
          pruned: [],
          defaulted: { ...raw, spec },
          openPaths: [],
          skippedTransitionRules: 0,
        };
      },
    };
    return admission;
  };
  return { loads, engine: async () => load };
}
