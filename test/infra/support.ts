// Builds the real app from a context for template tests, on stub Lambda bundles (fixtures/): the
// templates do not depend on the build output, which the real synth (test/deploy/synth.test.ts) rebuilds in
// parallel. Assets are not staged (no copy per synth).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { DISABLE_ASSET_STAGING_CONTEXT } from 'aws-cdk-lib/cx-api';
import { buildScannerApp, type ScannerApp } from '../../infra/app.js';
import { LAMBDA_BUNDLES_CONTEXT_KEY } from '../../infra/constructs/scanner-function.js';

export const REPO_ROOT = join(import.meta.dirname, '../..');

/** `<handler>/index.mjs` for each handler, each a stub that throws. */
export const STUB_LAMBDA_BUNDLES = join(import.meta.dirname, 'fixtures/lambda-bundles');

/** The context `cdk.json` ships. It names no cluster: a deploy must (`-c clusters=…`). */
export const SHIPPED_CDK_JSON_CONTEXT: Readonly<Record<string, unknown>> = JSON.parse(
  readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')
).context;

/** cdk.json's context plus the one setting every deploy adds: what `-c clusters=prod` synthesises. */
export const CDK_JSON_CONTEXT: Readonly<Record<string, unknown>> = {
  ...SHIPPED_CDK_JSON_CONTEXT,
  clusters: ['prod'],
};

export const FULL_CONTEXT: Readonly<Record<string, unknown>> = {
  ...CDK_JSON_CONTEXT,
  homeRegion: 'eu-west-1',
  clusters: ['prod', 'staging'],
  alertEmails: ['oncall@example.com', 'platform@example.com'],
  alertMinSeverity: 'medium',
  slackWorkspaceId: 'T0123ABCD',
  slackChannelId: 'C0123ABCD',
  vpcId: 'vpc-0123456789abcdef0',
  subnetIds: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'],
  accessEntries: true,
  scheduleMinutes: 30,
  logRetentionDays: 90,
};

export interface Built extends ScannerApp {
  readonly app: App;
  readonly template: Template;
  readonly forwarderTemplate?: Template | undefined;
  /** The AMI forwarding stacks' templates, by region. */
  readonly amiForwarderTemplates: ReadonlyMap<string, Template>;
}

export function buildApp(context: Readonly<Record<string, unknown>> = CDK_JSON_CONTEXT): Built {
  const app = new App({
    context: {
      ...context,
      [LAMBDA_BUNDLES_CONTEXT_KEY]: STUB_LAMBDA_BUNDLES,
      [DISABLE_ASSET_STAGING_CONTEXT]: true,
    },
  });
  const built = buildScannerApp(app, { nag: false });
  return {
    ...built,
    app,
    template: Template.fromStack(built.scanner),
    forwarderTemplate:
      built.forwarder === undefined ? undefined : Template.fromStack(built.forwarder),
    amiForwarderTemplates: new Map(
      [...built.amiForwarders].map(([region, stack]) => [region, Template.fromStack(stack)])
    ),
  };
}

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown> }>;

/** The resources of one type, by logical id. */
export function resourcesOf(template: Template, type: string): Resources {
  return template.findResources(type) as Resources;
}

/** Logical id of the only resource of `type` whose logical id contains `fragment`. */
export function logicalIdOf(template: Template, type: string, fragment: string): string {
  const ids = Object.keys(resourcesOf(template, type)).filter((id) => id.includes(fragment));
  if (ids.length !== 1)
    throw new Error(`expected one ${type} matching ${fragment}, got ${ids.join(', ')}`);
  return ids[0] as string;
}

/** Every action of every Allow statement in a policy document. */
export function actionsOf(document: unknown): string[] {
  const statements = (document as { Statement: { Action: string | string[] }[] }).Statement;
  return statements.flatMap((statement) =>
    Array.isArray(statement.Action) ? statement.Action : [statement.Action]
  );
}
