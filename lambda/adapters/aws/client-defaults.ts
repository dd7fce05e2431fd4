// Client settings shared by every adapter, in a module of their own so a Lambda can use them
// without importing every SDK client.

/** First try plus three retries: enough to ride out a burst, bounded so a scan cannot stall. */
export const DEFAULT_MAX_ATTEMPTS = 4;
