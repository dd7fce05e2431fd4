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
