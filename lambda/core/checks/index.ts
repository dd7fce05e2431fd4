import type { Check } from '../check.js';
import { instanceProfileIsName } from './instance-profile-is-name.js';

/** The check catalog, in report order. IDs are stable: never rename one. */
export const CHECKS: readonly Check[] = [instanceProfileIsName];

export function findCheck(id: string): Check | undefined {
  return CHECKS.find((check) => check.id === id);
}
