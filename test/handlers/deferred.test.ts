import { describe, expect, it, vi } from 'vitest';
import { deferredPort, once } from '../../lambda/handlers/deferred.js';

interface Greeter {
  greet(name: string): Promise<string>;
  count(): Promise<number>;
}

describe('once', () => {
  it('loads once for concurrent and later calls', async () => {
    // Prepare
    const load = vi.fn(async () => ({ loaded: true }));
    const value = once(load);
    // Act
    const results = await Promise.all([value(), value()]);
    await value();
    // Assess
    expect(load).toHaveBeenCalledTimes(1);
    expect(results[0]).toBe(results[1]);
  });

  it('loads again after a failed load', async () => {
    // Prepare
    const load = vi.fn().mockRejectedValueOnce(new Error('chunk missing')).mockResolvedValue(7);
    const value = once(load);
    // Act
    const first = value();
    // Assess
    await expect(first).rejects.toThrow('chunk missing');
    await expect(value()).resolves.toBe(7);
    expect(load).toHaveBeenCalledTimes(2);
  });
});

describe('deferredPort', () => {
  it('loads nothing until a method is called, then forwards every call to one implementation', async () => {
    // Prepare
    const names: string[] = [];
    const implementation = {
      prefix: 'hello',
      async greet(this: { prefix: string }, name: string) {
        names.push(name);
        return `${this.prefix} ${name}`;
      },
      async count() {
        return names.length;
      },
    };
    const load = vi.fn(async () => implementation as Greeter);
    // Act
    const port = deferredPort<Greeter>(load, { greet: true, count: true });
    // Assess
    expect(load).not.toHaveBeenCalled();
    await expect(port.greet('ada')).resolves.toBe('hello ada');
    await expect(port.count()).resolves.toBe(1);
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('rejects the call when the implementation cannot be loaded', async () => {
    // Prepare
    const port = deferredPort<Greeter>(async () => Promise.reject(new Error('no chunk')), {
      greet: true,
      count: true,
    });
    // Act & Assess
    await expect(port.count()).rejects.toThrow('no chunk');
  });
});
