import type { UnavailableReason } from '../core/facts/slice.js';

/** Base of the scanner's error hierarchy; `cause` keeps the original SDK or Kubernetes error. */
export class ScannerError extends Error {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ScannerError';
  }
}

/** Invalid configuration or command-line usage (CLI exit code 2). */
export class ConfigError extends ScannerError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConfigError';
  }
}

/** An input file (manifest, world file, event) that cannot be used. */
export class InputError extends ScannerError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InputError';
  }
}

/** Publishing findings (SNS) failed. */
export class PublishError extends ScannerError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PublishError';
  }
}

export type SourceUnavailableReason = UnavailableReason;

/** A source (AWS API, cluster, file) could not be read; the app layer turns it into data. */
export class SourceUnavailableError extends ScannerError {
  public readonly source: string;
  public readonly reason: SourceUnavailableReason;

  public constructor(
    source: string,
    reason: SourceUnavailableReason,
    message: string,
    options?: ErrorOptions
  ) {
    super(message, options);
    this.name = 'SourceUnavailableError';
    this.source = source;
    this.reason = reason;
  }
}

/**
 * A write refused before it was sent: the item is over the store's size limit (DynamoDB: 400 KB),
 * which the store would refuse too. `item` names it (its key).
 */
export class ItemTooLargeError extends ScannerError {
  public readonly item: string;
  public readonly bytes: number;
  public readonly maxBytes: number;

  public constructor(item: string, bytes: number, maxBytes: number) {
    super(`${item} is ${bytes} bytes, over the ${maxBytes}-byte item limit: not written`);
    this.name = 'ItemTooLargeError';
    this.item = item;
    this.bytes = bytes;
    this.maxBytes = maxBytes;
  }
}
