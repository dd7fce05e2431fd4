// Phase: Security Hub (the opt-in `securityHub` setting), loaded when a scan first has a change to
// deliver. Findings are imported in the function's own region, under the account's default product.
import { SecurityHubClient } from '@aws-sdk/client-securityhub';
import type { ApiCallCounter } from '../../adapters/aws/api-call-counter.js';
import { clientDefaults, instrumentClient } from '../../adapters/aws/client-defaults.js';
import { createSecurityHubPort } from '../../adapters/aws/security-hub.js';
import type { SecurityHubPort } from '../../core/asff.js';
import type { Config } from '../../shared/config.js';

export function createSecurityHub(config: Config, counter: ApiCallCounter): SecurityHubPort {
  const client = instrumentClient(
    new SecurityHubClient({ region: config.region, ...clientDefaults() }),
    'securityhub',
    counter
  );
  return createSecurityHubPort(client);
}
