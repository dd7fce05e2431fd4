// AwsFactsPort over a world file: the recorded lists, filtered with the same EC2 filter semantics
// the live API applies (core's matcher, not a second copy), so a snapshot replays the live scan.

import type { InstanceTypeOffering } from '../../core/facts/aws.js';
import type { AwsFactsPort } from '../../core/ports/aws-facts.js';
import { UnsupportedFilterError } from '../../core/selectors/ec2-filter.js';
import { SourceUnavailableError } from '../../shared/errors.js';
import { ec2ListMethods } from '../aws/fact-descriptors.js';
import { type KeyedWorldView, keyedMethods } from '../aws/keyed-fact-descriptors.js';
import type { World } from './schema.js';

export interface WorldFactsOptions {
  readonly world: World;
  /** Deprecation is relative to the scan's clock (only matters when IncludeDeprecated is false). */
  readonly now: Date;
}

function filtered<T>(source: string, items: readonly T[], accept: (item: T) => boolean): T[] {
  try {
    return items.filter(accept);
  } catch (error) {
    if (error instanceof UnsupportedFilterError) {
      throw new SourceUnavailableError(source, 'invalid-response', error.message, { cause: error });
    }
    throw error;
  }
}

export function createWorldAwsFacts(options: WorldFactsOptions): AwsFactsPort {
  const { world, now } = options;
  const context = { accountId: world.account, now };
  // Every keyed fact's index reads its part of the parsed file.
  const view: KeyedWorldView = world;
  return {
    // Each EC2 list: its recorded section, matched with the descriptor's filter semantics.
    ...ec2ListMethods((fact, key) => {
      const section: readonly object[] = world.ec2[key];
      const items = section.map((item) => fact.fromSdk(item));
      return async (query) =>
        filtered(fact.action, items, (item) => fact.matches(item, query, context));
    }),

    async describeInstanceTypeOfferings(): Promise<readonly InstanceTypeOffering[] | undefined> {
      // Own keys only, like SSM parameters: a region named `constructor` is not a prototype's.
      const byRegion = world.instanceTypeOfferings;
      if (byRegion === undefined || !Object.hasOwn(byRegion, world.region)) return undefined;
      return (byRegion[world.region] ?? []).map((offering) => ({
        instanceType: offering.instanceType,
        zone: offering.zone,
      }));
    },

    // Each keyed fact: the recorded item its name stands for, translated; a batch answers each
    // name so.
    ...keyedMethods((fact) => {
      const find = fact.index(view as never);
      return async (name) => {
        const item = find(name);
        return item === undefined ? undefined : fact.fromWorld(item);
      };
    }),
  };
}
