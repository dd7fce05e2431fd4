import { Stack, Token } from 'aws-cdk-lib';
import type { Rule } from 'aws-cdk-lib/aws-events';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { AMI_STATE_CHANGE_PATTERN } from '../event-patterns.js';
import { forwardToHomeBus } from './home-bus-forwarding.js';

export interface AmiEventForwarderProps {
  /** The scanner's region: AMI state changes of this stack's region go to its default event bus. */
  readonly homeRegion: string;
}

/**
 * EC2 emits `EC2 AMI State Change` in the image's own region only. Deployed in each other region
 * the scanner scans, this rule forwards them to the home region's default bus, where the scanner's
 * own AMI rule (same pattern) invokes the ami-event function; the event keeps its `region`, which
 * decides the clusters that are re-evaluated (same account: a role, no bus policy).
 */
export class AmiEventForwarder extends Construct {
  public readonly rule: Rule;
  public readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: AmiEventForwarderProps) {
    super(scope, id);
    const region = Stack.of(this).region;
    if (Token.isUnresolved(region)) {
      throw new Error(
        'AmiEventForwarder needs a stack with an explicit region (env: { region }): it forwards that region’s AMI events'
      );
    }
    if (region === props.homeRegion) {
      throw new Error(
        `AmiEventForwarder must be deployed outside the home region ${props.homeRegion}: the scanner's own rule receives AMI events there`
      );
    }
    ({ rule: this.rule, deadLetterQueue: this.deadLetterQueue } = forwardToHomeBus(this, {
      homeRegion: props.homeRegion,
      ruleId: 'AmiStateChangeRule',
      ruleDescription: `nodeclass-scanner: forward AMI state changes in ${region} to ${props.homeRegion}`,
      roleDescription: `nodeclass-scanner: put ${region} AMI state changes on the default bus in ${props.homeRegion}`,
      eventPattern: AMI_STATE_CHANGE_PATTERN,
    }));
  }
}

/** Where the scanner looks for clusters, as its props or settings say it. */
export interface ScannedRegionsInput {
  readonly homeRegion: string;
  /** `name` (home region) or `name@region`. */
  readonly clusters: readonly string[];
  /** Discovery: `*` or tag filters; empty or absent = off (then discoveryRegions are not scanned). */
  readonly discoverClusters?: string | undefined;
  /** Regions discovery lists clusters in; the home region when empty. */
  readonly discoveryRegions?: readonly string[] | undefined;
}

/**
 * The regions other than home the scanner scans: those of `name@region` clusters and, with
 * discovery on, the discovery regions. Each needs an AmiEventForwarder. Sorted, without repeats.
 */
export function amiEventForwardingRegions(input: ScannedRegionsInput): string[] {
  const discovery = (input.discoverClusters ?? '') !== '';
  const regions = new Set<string>([
    ...input.clusters.flatMap((entry) => entry.split('@').slice(1, 2)),
    ...(discovery ? (input.discoveryRegions ?? []) : []),
  ]);
  regions.delete(input.homeRegion);
  return [...regions].sort();
}
