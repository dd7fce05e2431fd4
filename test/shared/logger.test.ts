import { Logger } from '@aws-lambda-powertools/logger';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { REDACTED, redactSecrets } from '../../lambda/shared/logger.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('redactSecrets', () => {
  it('redacts values under secret-looking keys and tokens inside strings', () => {
    expect(redactSecrets('token', 'abc')).toBe(REDACTED);
    expect(redactSecrets('secretAccessKey', { a: 1 })).toBe(REDACTED);
    expect(
      redactSecrets('url', 'https://sts/?X-Amz-Signature=abcdef0123&X-Amz-Security-Token=FwoGZX')
    ).toBe(`https://sts/?${REDACTED}&${REDACTED}`);
    expect(redactSecrets('message', 'header k8s-aws-v1.aHR0cHM6Ly9zdHM used')).toBe(
      `header ${REDACTED} used`
    );
    expect(redactSecrets('cluster', 'prod')).toBe('prod');
  });

  it('keeps tokens out of the log lines a Logger writes', () => {
    // Prepare
    const lines: string[] = [];
    vi.spyOn(console, 'info').mockImplementation((line: string) => {
      lines.push(line);
    });
    const logger = new Logger({
      serviceName: 't',
      logLevel: 'INFO',
      jsonReplacerFn: redactSecrets,
    });
    // Act
    logger.info('calling k8s-aws-v1.c2VjcmV0', {
      credentials: { accessKeyId: 'AKIA' },
      cluster: 'prod',
    });
    // Assess
    expect(lines.join('\n')).not.toMatch(/c2VjcmV0|AKIA/);
    expect(lines.join('\n')).toContain('prod');
  });
});
