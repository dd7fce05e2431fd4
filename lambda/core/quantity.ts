// Kubernetes resource quantities (`1000`, `500m`, `1.5Gi`, `1e3`), parsed exactly: a quantity is a
// fraction of two integers, so `memory: 1000` (bytes, no unit) and `1Gi` compare as the API
// server's `resource.Quantity` compares them, without floating-point rounding. Grammar:
// https://github.com/kubernetes/apimachinery/blob/v0.34.1/pkg/api/resource/quantity.go
// (`<signedNumber><suffix>`; binary Ki–Ei, decimal n u m k M G T P E, or an `e`/`E` exponent).

/** An exact quantity: `numerator / denominator`, denominator positive. */
export interface Quantity {
  readonly numerator: bigint;
  readonly denominator: bigint;
}

const BINARY: Readonly<Record<string, bigint>> = {
  Ki: 2n ** 10n,
  Mi: 2n ** 20n,
  Gi: 2n ** 30n,
  Ti: 2n ** 40n,
  Pi: 2n ** 50n,
  Ei: 2n ** 60n,
};

/** Decimal suffixes as powers of ten. */
const DECIMAL: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

const PATTERN =
  /^([+-])?(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei)|([numkMGTPE])|[eE]([+-]?\d+))?$/;

function scaled(numerator: bigint, denominator: bigint, exponent: number): Quantity {
  return exponent >= 0
    ? { numerator: numerator * 10n ** BigInt(exponent), denominator }
    : { numerator, denominator: denominator * 10n ** BigInt(-exponent) };
}

/**
 * A quantity as the API server parses it (a YAML number is its decimal text: `1000` is 1000, in
 * bytes for memory). Undefined when the text is not a quantity.
 */
export function parseQuantity(value: string | number): Quantity | undefined {
  const text = typeof value === 'number' ? numberText(value) : value.trim();
  if (text === undefined) return undefined;
  const match = PATTERN.exec(text);
  if (!match) return undefined;
  const [, sign, number = '', binary, decimal, exponent] = match;
  const [whole = '', fraction = ''] = number.split('.');
  const digits = BigInt(`${whole}${fraction}` || '0');
  const negative = sign === '-' ? -1n : 1n;
  const base = scaled(negative * digits, 1n, -fraction.length);
  if (binary !== undefined) {
    const factor = BINARY[binary] ?? 1n;
    return { numerator: base.numerator * factor, denominator: base.denominator };
  }
  const power = exponent !== undefined ? Number(exponent) : (DECIMAL[decimal ?? ''] ?? 0);
  if (!Number.isSafeInteger(power) || Math.abs(power) > 1000) return undefined;
  return scaled(base.numerator, base.denominator, power);
}

/** A JavaScript number as the decimal text YAML wrote (`1e+21` keeps its exponent form). */
function numberText(value: number): string | undefined {
  return Number.isFinite(value) ? String(value).replace('e+', 'e') : undefined;
}

/** An integer quantity (`count` cores, bytes, pods…). */
export function integerQuantity(count: bigint | number): Quantity {
  return { numerator: BigInt(count), denominator: 1n };
}

/** `count` MiB, in bytes. */
export function mebibytes(count: bigint | number): Quantity {
  return integerQuantity(BigInt(count) * 2n ** 20n);
}

/** `count` thousandths (CPU millicores). */
export function millis(count: bigint | number): Quantity {
  return { numerator: BigInt(count), denominator: 1000n };
}

export const ZERO: Quantity = integerQuantity(0);

/** -1, 0 or 1 as `a` is less than, equal to or greater than `b`. */
export function compareQuantities(a: Quantity, b: Quantity): -1 | 0 | 1 {
  const left = a.numerator * b.denominator;
  const right = b.numerator * a.denominator;
  return left < right ? -1 : left > right ? 1 : 0;
}

function addQuantities(a: Quantity, b: Quantity): Quantity {
  if (a.denominator === b.denominator) {
    return { numerator: a.numerator + b.numerator, denominator: a.denominator };
  }
  return {
    numerator: a.numerator * b.denominator + b.numerator * a.denominator,
    denominator: a.denominator * b.denominator,
  };
}

export function subtractQuantities(a: Quantity, b: Quantity): Quantity {
  return addQuantities(a, { numerator: -b.numerator, denominator: b.denominator });
}

/** The quantity as a (possibly rounded) JavaScript number, for display and percentages. */
export function quantityValue(q: Quantity): number {
  return Number(q.numerator) / Number(q.denominator);
}

const BYTE_UNITS: readonly [string, bigint][] = [
  ['Ei', 2n ** 60n],
  ['Pi', 2n ** 50n],
  ['Ti', 2n ** 40n],
  ['Gi', 2n ** 30n],
  ['Mi', 2n ** 20n],
  ['Ki', 2n ** 10n],
];

/**
 * How a quantity reads in a message: bytes in the largest binary unit that divides them exactly
 * (`3788Mi`, `1000` for unit-less bytes), others as a plain decimal (`2`, `0.5`).
 */
export function formatQuantity(q: Quantity, bytes = false): string {
  if (q.denominator === 1n && bytes) {
    for (const [unit, size] of BYTE_UNITS) {
      if (q.numerator !== 0n && q.numerator % size === 0n) return `${q.numerator / size}${unit}`;
    }
    return String(q.numerator);
  }
  if (q.numerator % q.denominator === 0n) return String(q.numerator / q.denominator);
  return String(Number(quantityValue(q).toFixed(3)));
}
