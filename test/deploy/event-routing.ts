// EventBridge as the synthesized stacks configure it: an AWS service event is put on the default bus
// of its region; each enabled rule there whose pattern matches delivers it to its targets. A rule
// of a forwarding stack puts it on another region's bus as the rule's role (authorized against
// that stack's template, the role's trust policy included); a rule of the scanner stack invokes
// its function, if a Lambda permission admits EventBridge from that rule. The event is delivered
// unchanged (cross-Region delivery keeps `region`, `account` and `resources`).
// https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns.html
import { type Principal, TemplateAuthorizer } from './authorize.js';
import type { DeployedTemplate } from './template.js';

/** What one rule did with the event. */
export interface RuleDelivery {
  /** The stack and the rule (logical id). */
  readonly rule: string;
  /** The function invoked, or the event bus the event was put on. */
  readonly target: string;
}

type Pattern = Readonly<Record<string, unknown>>;

/** Whether `value` (an event field, or absent) matches one pattern list entry. */
function matchesEntry(entry: unknown, value: unknown, present: boolean): boolean {
  if (entry === null || typeof entry !== 'object') {
    const values = Array.isArray(value) ? value : [value];
    return present && values.some((candidate) => candidate === entry);
  }
  const keys = Object.keys(entry);
  if (keys.length === 1 && keys[0] === 'exists') {
    return (entry as { exists: boolean }).exists === present;
  }
  if (keys.length === 1 && keys[0] === 'prefix') {
    const prefix = String((entry as { prefix: unknown }).prefix);
    const values = Array.isArray(value) ? value : [value];
    return present && values.some((candidate) => String(candidate).startsWith(prefix));
  }
  throw new Error(`event pattern: the filter ${JSON.stringify(entry)} is not emulated`);
}

/** EventBridge pattern matching for the filters the stacks write: value lists, exists, prefix. */
function matchesPattern(pattern: Pattern, event: unknown): boolean {
  const fields = (event ?? {}) as Record<string, unknown>;
  return Object.entries(pattern).every(([key, expected]) => {
    const present = Object.hasOwn(fields, key);
    const value = fields[key];
    if (Array.isArray(expected)) {
      return expected.some((entry) => matchesEntry(entry, value, present));
    }
    if (expected !== null && typeof expected === 'object') {
      return (
        present &&
        value !== null &&
        typeof value === 'object' &&
        matchesPattern(expected as Pattern, value)
      );
    }
    throw new Error(`event pattern: ${key} must be a list or an object`);
  });
}

interface RuleTarget {
  readonly Arn: string;
  readonly Id: string;
  readonly RoleArn?: string;
}

/** The enabled pattern rules of a stack's default bus, resolved. */
function rulesOf(template: DeployedTemplate) {
  return template.ofType('AWS::Events::Rule').flatMap(([logicalId, rule]) => {
    const props = template.resolve(rule.Properties ?? {}) as {
      EventPattern?: Pattern;
      EventBusName?: string;
      State?: string;
      Targets?: RuleTarget[];
    };
    if (props.EventPattern === undefined || props.State === 'DISABLED') return [];
    if (props.EventBusName !== undefined && props.EventBusName !== 'default') return [];
    return [{ logicalId, pattern: props.EventPattern, targets: props.Targets ?? [] }];
  });
}

/** `arn:<partition>:events:<region>:<account>:event-bus/default` → the region, if it is one. */
function defaultBusRegion(arn: string, account: string): string | undefined {
  const match = arn.match(/^arn:[a-z-]+:events:([a-z0-9-]+):(\d{12}):event-bus\/default$/);
  return match && match[2] === account ? match[1] : undefined;
}

export class EventRouter {
  private readonly authorizers = new Map<DeployedTemplate, TemplateAuthorizer>();

  constructor(
    /** The scanner stack, in the home region. */
    private readonly home: DeployedTemplate,
    /** Other stacks with rules (the AMI forwarding stacks), by their region. */
    private readonly regional: ReadonlyMap<string, DeployedTemplate>,
    /** Invokes a function of the scanner stack (by logical id) with the event. */
    private readonly invoke: (functionLogicalId: string, event: unknown) => Promise<void>
  ) {}

  private authorizerOf(template: DeployedTemplate): TemplateAuthorizer {
    let authorizer = this.authorizers.get(template);
    if (authorizer === undefined) {
      authorizer = new TemplateAuthorizer(template);
      this.authorizers.set(template, authorizer);
    }
    return authorizer;
  }

  /**
   * Puts an AWS service event on `region`'s default bus, as the service does, and follows every
   * delivery. Returns what each matching rule did, in order.
   */
  async put(region: string, event: { readonly region: string }): Promise<RuleDelivery[]> {
    if (event.region !== region) throw new Error(`an event of ${event.region} put in ${region}`);
    if (region === this.home.account.region) return this.deliverHome(event);
    const template = this.regional.get(region);
    if (template === undefined) return []; // No stack of this deployment listens there.
    const deliveries: RuleDelivery[] = [];
    for (const rule of rulesOf(template)) {
      if (!matchesPattern(rule.pattern, event)) continue;
      for (const target of rule.targets) {
        const ruleName = `${template.stackName}/${rule.logicalId}`;
        const busRegion = defaultBusRegion(target.Arn, template.account.id);
        if (busRegion === undefined) throw new Error(`${ruleName} targets ${target.Arn}`);
        if (busRegion === region) throw new Error(`${ruleName} forwards to its own bus`);
        this.authorizePut(template, target, ruleName);
        deliveries.push({ rule: ruleName, target: target.Arn });
        // Forwarded events keep their region: the home bus's rules see them as they were.
        deliveries.push(...(await this.deliverOnBus(busRegion, event)));
      }
    }
    return deliveries;
  }

  /** An event another bus put on `region`'s default bus. */
  private deliverOnBus(region: string, event: unknown): Promise<RuleDelivery[]> {
    if (region !== this.home.account.region) {
      throw new Error(`a rule forwards to ${region}, where no stack of the deployment listens`);
    }
    return this.deliverHome(event);
  }

  private async deliverHome(event: unknown): Promise<RuleDelivery[]> {
    const deliveries: RuleDelivery[] = [];
    for (const rule of rulesOf(this.home)) {
      if (!matchesPattern(rule.pattern, event)) continue;
      for (const target of rule.targets) {
        const fn = this.functionAt(this.home, target.Arn);
        this.admitInvoke(this.home, fn, rule.logicalId);
        deliveries.push({ rule: `${this.home.stackName}/${rule.logicalId}`, target: fn });
        await this.invoke(fn, event);
      }
    }
    return deliveries;
  }

  /** The rule's role must be assumable by EventBridge and allowed events:PutEvents on the bus. */
  private authorizePut(template: DeployedTemplate, target: RuleTarget, rule: string): void {
    const roleId = Object.entries(template.resources).find(
      ([logicalId, resource]) =>
        resource.Type === 'AWS::IAM::Role' && template.getAtt(logicalId, 'Arn') === target.RoleArn
    )?.[0];
    if (roleId === undefined) throw new Error(`${rule}: its target has no role of the stack`);
    const trust = template.statementsOf(
      template.resources[roleId]?.Properties?.AssumeRolePolicyDocument
    );
    const assumable = trust.some(
      (statement) =>
        statement.Effect === 'Allow' &&
        typeof statement.Principal === 'object' &&
        [statement.Principal.Service ?? []].flat().includes('events.amazonaws.com')
    );
    if (!assumable) throw new Error(`${rule}: EventBridge may not assume ${roleId}`);
    const principal: Principal = { kind: 'role', roleLogicalId: roleId, arn: target.RoleArn ?? '' };
    const decision = this.authorizerOf(template).authorize(
      principal,
      'events:PutEvents',
      target.Arn
    );
    if (!decision.allowed) {
      throw new Error(`${rule}: events:PutEvents on ${target.Arn} denied (${decision.reason})`);
    }
  }

  /** The logical id of the function a target ARN names. */
  private functionAt(template: DeployedTemplate, arn: string): string {
    const fn = template
      .ofType('AWS::Lambda::Function')
      .find(([logicalId]) => template.getAtt(logicalId, 'Arn') === arn)?.[0];
    if (fn === undefined) throw new Error(`a rule of ${template.stackName} targets ${arn}`);
    return fn;
  }

  /** A Lambda permission must let EventBridge invoke `fn` from `rule`. */
  private admitInvoke(template: DeployedTemplate, fn: string, rule: string): void {
    const fnArn = template.getAtt(fn, 'Arn');
    const ruleArn = template.getAtt(rule, 'Arn');
    const admitted = template.ofType('AWS::Lambda::Permission').some(([, permission]) => {
      const props = template.resolve(permission.Properties ?? {}) as Record<string, string>;
      return (
        props.Action === 'lambda:InvokeFunction' &&
        props.Principal === 'events.amazonaws.com' &&
        props.FunctionName === fnArn &&
        props.SourceArn === ruleArn
      );
    });
    if (!admitted) throw new Error(`no Lambda permission lets ${rule} invoke ${fn}`);
  }
}
