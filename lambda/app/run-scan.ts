import type { AnnotationSuppression } from '../core/annotation-policy.js';
import type { Check } from '../core/check.js';
import { CHECKS } from '../core/checks/index.js';
import { runChecks } from '../core/evaluate.js';
import type { IgnoreRule } from '../core/ignore-rules.js';
import { emptyInventory, type Inventory } from '../core/inventory.js';
import type { InventoryEnricher, ObjectSource } from '../core/ports/objects.js';
import { redactEvaluation, redactSecrets } from '../core/redact.js';
import { buildReport, type InputError, type ScanReport } from '../core/report.js';
import { annotatedObjectsOf, applySuppressions } from '../core/suppress.js';
import { type AdmissionEngine, applyAdmission } from './admission.js';

export interface ScanPlan {
  readonly objects: ObjectSource;
  /** Run in order: later enrichers may use what earlier ones collected. */
  readonly enrichers?: readonly InventoryEnricher[];
  readonly environment?: Inventory['environment'];
}

export interface ScanOptions {
  readonly now: Date;
  readonly checks?: readonly Check[];
  readonly only?: readonly string[];
  readonly skip?: readonly string[];
  /** Config `ignore` rules (validated); annotations on the objects apply as well. */
  readonly ignore?: readonly IgnoreRule[];
  /** Whether annotations on the objects may suppress (default `allow`). */
  readonly annotationSuppression?: AnnotationSuppression | undefined;
  /** What refuses annotations, as a refused finding's message names it (the flag, the setting). */
  readonly annotationSuppressionSetting?: string | undefined;
}

export function selectChecks(
  checks: readonly Check[],
  only: readonly string[] = [],
  skip: readonly string[] = []
): Check[] {
  return checks.filter(
    (check) => (only.length === 0 || only.includes(check.id)) && !skip.includes(check.id)
  );
}

export interface CollectOptions {
  /**
   * Admission by the installed CRDs (default on). `snapshot` records the CRDs without judging
   * objects by them; tests inject the engine.
   */
  readonly admission?: false | AdmissionEngine;
  /**
   * The checks the scan runs. When none of them reads the controller's permissions (`inputs` or
   * `uses`), the permissions enricher (planning and simulating every request) is not run.
   */
  readonly checks?: readonly Check[];
}

/** Builds the inventory from the plan's sources, without evaluating checks. */
export async function collectInventory(
  plan: ScanPlan,
  options: CollectOptions = {}
): Promise<{ inventory: Inventory; inputErrors: readonly InputError[] }> {
  const loaded = await plan.objects.load();
  let inventory = emptyInventory({
    inputs: new Set(['spec', ...loaded.inputs]),
    environment: plan.environment ?? 'production',
    clusters: loaded.clusters,
    nodeClasses: loaded.nodeClasses,
    nodePools: loaded.nodePools,
  });
  const permissionsRead =
    options.checks === undefined ||
    options.checks.some((check) =>
      [...check.inputs, ...(check.uses ?? [])].includes('permissions')
    );
  for (const enricher of plan.enrichers ?? []) {
    if (enricher.input === 'permissions' && !permissionsRead) continue;
    inventory = await enricher.enrich(inventory);
  }
  if (options.admission === false) return { inventory, inputErrors: loaded.inputErrors };
  // Before the checks, which read each object's verdict and the CRD's defaults.
  const admitted = await applyAdmission(inventory, options.admission);
  return {
    inventory: admitted.inventory,
    inputErrors: [...loaded.inputErrors, ...admitted.inputErrors],
  };
}

/** Evaluates an inventory into a report. */
export function evaluateInventory(
  inventory: Inventory,
  options: ScanOptions,
  inputErrors: readonly InputError[] = []
): ScanReport {
  const checks = selectChecks(options.checks ?? CHECKS, options.only, options.skip);
  // Scrubbed here, the one place both the CLI and the Lambdas pass: no rendering or publishing
  // ever sees a token a server echoed back.
  const evaluation = redactEvaluation(runChecks(inventory, checks, { now: options.now }), checks);
  // Annotations may name any catalog check, including ones this scan did not select.
  const catalog = [...CHECKS, ...(options.checks ?? []).filter((check) => !CHECKS.includes(check))];
  const findings = applySuppressions(evaluation.findings, {
    rules: options.ignore ?? [],
    objects: annotatedObjectsOf(inventory),
    now: options.now,
    catalog,
    annotationSuppression: options.annotationSuppression,
    annotationSuppressionSetting: options.annotationSuppressionSetting,
  });
  return buildReport({
    evaluation: { ...evaluation, findings },
    now: options.now,
    nodeClasses: inventory.nodeClasses.length,
    clusters: inventory.clusters.map((cluster) => cluster.name).filter((name) => name !== ''),
    inputErrors: inputErrors.map((error) => ({ ...error, message: redactSecrets(error.message) })),
  });
}

/** collect → evaluate → report. */
export async function runScan(plan: ScanPlan, options: ScanOptions): Promise<ScanReport> {
  const { inventory, inputErrors } = await collectInventory(plan);
  return evaluateInventory(inventory, options, inputErrors);
}
