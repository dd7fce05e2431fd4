import { describe, expect, it } from 'vitest';
import {
  DEFAULT_INPUT_LIMITS,
  describeLimit,
  INPUT_LIMIT_ENV,
  inputLimitsFromEnv,
  limitsFromEnv,
} from '../../../lambda/adapters/files/limits.js';
import { DEFAULT_KUBE_LIMITS, KUBE_LIMIT_ENV } from '../../../lambda/adapters/kube/kube-client.js';
import { ConfigError } from '../../../lambda/shared/errors.js';

describe('inputLimitsFromEnv', () => {
  it('uses the defaults when no variable is set, or set empty', () => {
    expect(inputLimitsFromEnv({})).toEqual(DEFAULT_INPUT_LIMITS);
    expect(inputLimitsFromEnv({ NODECLASS_SCAN_MAX_FILES: ' ' })).toEqual(DEFAULT_INPUT_LIMITS);
  });

  it('takes each limit from its own variable', () => {
    const env = Object.fromEntries(
      Object.values(INPUT_LIMIT_ENV).map((name, index) => [name, String(index + 1)])
    );
    const limits = inputLimitsFromEnv(env);
    expect(Object.values(limits)).toEqual(
      Object.keys(INPUT_LIMIT_ENV).map((_, index) => index + 1)
    );
    expect(inputLimitsFromEnv({ NODECLASS_SCAN_MAX_DOCUMENTS: '20000' }).maxDocuments).toBe(20_000);
  });

  it.each(['0', '-1', '1.5', '1e6', 'ten', '99999999999999999999'])(
    'refuses %j as a usage error naming the variable',
    (value) => {
      expect(() => inputLimitsFromEnv({ NODECLASS_SCAN_MAX_TOKENS: value })).toThrow(
        new ConfigError(
          `NODECLASS_SCAN_MAX_TOKENS must be a positive whole number, not ${JSON.stringify(value)}`
        )
      );
    }
  );

  it('names the value, the unit and the variable in error messages', () => {
    expect(describeLimit(DEFAULT_INPUT_LIMITS, 'maxInputBytes')).toBe(
      'limit 10485760 bytes, set NODECLASS_SCAN_MAX_INPUT_BYTES to raise it'
    );
    expect(describeLimit(DEFAULT_INPUT_LIMITS, 'maxFiles')).toBe(
      'limit 100000, set NODECLASS_SCAN_MAX_FILES to raise it'
    );
  });
});

describe('limitsFromEnv for the Kubernetes client', () => {
  it('overrides the kube limits named by their variables and keeps the other defaults', () => {
    const limits = limitsFromEnv(DEFAULT_KUBE_LIMITS, KUBE_LIMIT_ENV, {
      NODECLASS_SCAN_KUBE_MAX_LIST_PAGES: '5000',
      NODECLASS_SCAN_KUBE_LIST_DEADLINE_MS: ' 120000 ',
    });
    expect(limits).toEqual({
      ...DEFAULT_KUBE_LIMITS,
      maxListPages: 5000,
      listDeadlineMs: 120_000,
    });
  });

  it('refuses a value that is not a positive whole number, naming the variable', () => {
    expect(() =>
      limitsFromEnv(DEFAULT_KUBE_LIMITS, KUBE_LIMIT_ENV, {
        NODECLASS_SCAN_KUBE_MAX_LIST_BYTES: '64MiB',
      })
    ).toThrow(/NODECLASS_SCAN_KUBE_MAX_LIST_BYTES must be a positive whole number/);
  });
});
