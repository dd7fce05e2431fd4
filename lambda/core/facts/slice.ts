/** Why a source could not be read. Checks turn these into `error` findings naming the reason. */
export type UnavailableReason =
  | 'access-denied'
  | 'not-found'
  | 'not-installed'
  | 'throttled'
  | 'unreachable'
  | 'timeout'
  | 'invalid-response'
  | 'unknown';

/** A piece of collected data: present, or unavailable with the reason (never silently missing). */
export type Slice<T> =
  | { readonly status: 'ok'; readonly value: T }
  | {
      readonly status: 'unavailable';
      readonly reason: UnavailableReason;
      readonly message: string;
    };

export function ok<T>(value: T): Slice<T> {
  return { status: 'ok', value };
}

export function unavailable<T>(reason: UnavailableReason, message: string): Slice<T> {
  return { status: 'unavailable', reason, message };
}
