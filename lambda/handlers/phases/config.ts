// Phase: the scanning functions' configuration. IGNORE_RULES is validated with zod against the
// check catalog, so this loads on the first invocation, not at cold start.

import type { MetricsDetail } from '../../adapters/metrics.js';
import { CHECKS } from '../../core/checks/index.js';
import { type Config, type HandlerName, loadConfig } from '../../shared/config.js';
import { SETTINGS } from '../../shared/settings.js';

export function loadScanningConfig(
  env: Readonly<Record<string, string | undefined>>,
  handler: HandlerName
): Config {
  return loadConfig(env, handler, { checkIds: CHECKS.map((check) => check.id) });
}

/** The `metricsDetail` setting, its default applied. */
export function metricsDetailOf(config: Config): MetricsDetail {
  return config.settings.metricsDetail ?? SETTINGS.metricsDetail.default;
}
