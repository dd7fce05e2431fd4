// How each Lambda and its execution role are named, in the construct tree and in the synthesized
// template. Tools that read the template (tests, a deployment simulation) use this, never ids.
import { HANDLER_NAMES, type HandlerName } from '../lambda/shared/config.js';

/** `scan-cluster` → `ScanCluster`. */
export function pascal(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, _dash: string, letter: string) => letter.toUpperCase());
}

/** Construct id of each function (its `AWS::Lambda::Function` is `<id>/Function`). */
export const FUNCTION_CONSTRUCT_IDS: Readonly<Record<HandlerName, string>> = Object.fromEntries(
  HANDLER_NAMES.map((name) => [name, pascal(name)])
) as Record<HandlerName, string>;

/** Construct id of each function's own execution role: `DispatchRole`, `ScanClusterRole`, … */
export const ROLE_CONSTRUCT_IDS: Readonly<Record<HandlerName, string>> = Object.fromEntries(
  HANDLER_NAMES.map((name) => [name, `${pascal(name)}Role`])
) as Record<HandlerName, string>;

/** Resource metadata key on each function and role: its handler name. */
export const HANDLER_METADATA_KEY = 'nodeclass-scanner:handler';

interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly Metadata?: Record<string, unknown>;
}

export interface HandlerResources {
  readonly functionLogicalId: string;
  readonly roleLogicalId: string;
  /** Values may be CloudFormation intrinsics (`Ref`, `Fn::GetAtt`) still to resolve. */
  readonly environment: Readonly<Record<string, unknown>>;
}

/** Each handler's function, role and environment in a synthesized template (JSON). */
export function handlerResources(template: {
  readonly Resources: Readonly<Record<string, TemplateResource>>;
}): Record<HandlerName, HandlerResources> {
  const found: Partial<Record<HandlerName, HandlerResources>> = {};
  for (const [id, resource] of Object.entries(template.Resources)) {
    const handler = resource.Metadata?.[HANDLER_METADATA_KEY] as HandlerName | undefined;
    if (resource.Type !== 'AWS::Lambda::Function' || handler === undefined) continue;
    const role = resource.Properties?.Role as { 'Fn::GetAtt'?: [string, string] } | undefined;
    const roleLogicalId = role?.['Fn::GetAtt']?.[0];
    if (roleLogicalId === undefined) throw new Error(`${id}: Role is not a role of this template`);
    const variables = (resource.Properties?.Environment as { Variables?: Record<string, unknown> })
      ?.Variables;
    found[handler] = { functionLogicalId: id, roleLogicalId, environment: variables ?? {} };
  }
  const missing = HANDLER_NAMES.filter((name) => found[name] === undefined);
  if (missing.length > 0) throw new Error(`no function tagged for ${missing.join(', ')}`);
  return found as Record<HandlerName, HandlerResources>;
}
