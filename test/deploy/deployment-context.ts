// The simulated deployment's settings, in a module of their own: global setup reads them to start
// the synth and must not wait for the simulation's imports (dynalite, the emulators) first.
import { join } from 'node:path';

export const REPO_ROOT = join(import.meta.dirname, '../..');
export const ALERT_EMAIL = 'oncall@example.com';

/**
 * The deployment the simulation synthesizes: the demo account's two clusters, email alerts, and
 * discovery in a second region (eu-west-1), which has no cluster until a scenario creates one:
 * the synth adds that region's AMI-event forwarding stack.
 */
export const SIMULATION_CONTEXT = {
  homeRegion: 'us-east-1',
  clusters: ['prod-use1', 'staging-use1'],
  discoverClusters: '*',
  discoveryRegions: ['eu-west-1'],
  alertEmails: [ALERT_EMAIL],
  alertMinSeverity: 'high',
  accessEntries: true,
  digest: 'on-change',
  iamEvents: true,
  amiEvents: true,
  // Every scenario also delivers to Security Hub (its exactly-once discipline is the lifecycle's).
  securityHub: true,
  // Annotations may suppress IMDS checks only: the annotation scenarios see one allowed and one
  // refused (the demo world carries no ignore-check annotation, so no other scenario sees either).
  annotationSuppression: ['imds-*'],
  // One IAM budget for all concurrent scans, as deployed, above the default: the emulator does not
  // throttle IAM, and the scenarios' scans wait for it.
  iamCallsPerSecond: 10,
} as const;
