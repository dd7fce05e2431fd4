// The message the publisher port sends. Its own module: the lifecycle records claimed messages
// and the renderer builds them, so neither may import the other for this type.

/** What the publisher port sends: one SNS PublishBatch entry. */
export interface OutgoingMessage {
  /** Unique within one scan: used as the batch entry id (`[A-Za-z0-9_-]{1,80}`). */
  readonly id: string;
  /** Email subject (ASCII, < 100 characters). */
  readonly subject: string;
  /** String message attributes for subscription filter policies. */
  readonly attributes: Readonly<Record<string, string>>;
  /** Per-protocol bodies (`MessageStructure: json`). */
  readonly bodies: { readonly default: string; readonly email: string; readonly https: string };
  /**
   * The changes this message notifies, as `kind:findingId` (one for a per-change message, all of
   * a batch for a summary; none for a digest). Not sent: it lets a later attempt of the scan tell
   * which of its changes an already claimed summary covers.
   */
  readonly covers?: readonly string[] | undefined;
}
