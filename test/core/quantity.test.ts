import { describe, expect, it } from 'vitest';
import {
  compareQuantities,
  formatQuantity,
  parseQuantity,
  type Quantity,
} from '../../lambda/core/quantity.js';

function q(text: string | number): Quantity {
  const parsed = parseQuantity(text);
  if (parsed === undefined) throw new Error(`not a quantity: ${text}`);
  return parsed;
}

describe('Kubernetes quantities', () => {
  it('reads a number without a unit as itself: memory 1000 is 1000 bytes, not 1000Mi', () => {
    expect(compareQuantities(q('1000'), q(1000))).toBe(0);
    expect(compareQuantities(q(1000), q('1Ki'))).toBe(-1);
    expect(compareQuantities(q('1000'), q('1k'))).toBe(0);
  });

  it('compares binary, decimal, milli and exponent forms exactly', () => {
    expect(compareQuantities(q('1Gi'), q('1073741824'))).toBe(0);
    expect(compareQuantities(q('1G'), q('1e9'))).toBe(0);
    expect(compareQuantities(q('1.5Gi'), q('1536Mi'))).toBe(0);
    expect(compareQuantities(q('500m'), q('0.5'))).toBe(0);
    expect(compareQuantities(q('2'), q('2000m'))).toBe(0);
    expect(compareQuantities(q('.5'), q('1.'))).toBe(-1);
    expect(compareQuantities(q('1E'), q('1e18'))).toBe(0);
    expect(compareQuantities(q('1E3'), q('1k'))).toBe(0);
    expect(compareQuantities(q('-1'), q('0'))).toBe(-1);
    expect(compareQuantities(q('100n'), q('0.1u'))).toBe(0);
    // No float rounding: 0.1 + 0.2 style sums stay exact.
    expect(compareQuantities(q('0.30000000000000001'), q('0.3'))).toBe(1);
  });

  it('rejects what the API server rejects', () => {
    for (const text of ['', 'Mi', '1 Gi', '1gi', '1KiB', '1e', '0x10', '1.2.3', 'Infinity']) {
      expect(parseQuantity(text)).toBeUndefined();
    }
    expect(parseQuantity(Number.NaN)).toBeUndefined();
  });

  it('formats bytes in the largest binary unit that divides them, others as decimals', () => {
    expect(formatQuantity(q('7577Mi'), true)).toBe('7577Mi');
    expect(formatQuantity(q('2Gi'), true)).toBe('2Gi');
    expect(formatQuantity(q('1000'), true)).toBe('1000');
    expect(formatQuantity(q('1930m'))).toBe('1.93');
    expect(formatQuantity(q('96'))).toBe('96');
  });
});
