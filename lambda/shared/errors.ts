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
