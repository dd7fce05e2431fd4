import { describe, expect, it } from 'vitest';
import { subnetsHaveFreeIps } from '../../../lambda/core/checks/subnets-have-free-ips.js';
import { runChecks } from '../../../lambda/core/evaluate.js';
import type { Subnet } from '../../../lambda/core/facts/aws.js';
import { ok } from '../../../lambda/core/facts/slice.js';
import {
  anAwsInventory,
  aSubnet,
  SCAN_TIME,
  someAwsFacts,
  throttled,
} from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';

const now = SCAN_TIME;

function evaluateWith(subnets: Subnet[]) {
  const facts = someAwsFacts({ subnets: ok({ queries: [], subnets }) });
  return subnetsHaveFreeIps.evaluate(anAwsInventory([aNodeClassObject()], facts), { now });
}

describe('subnets-have-free-ips', () => {
  it('passes when every subnet has at least 16 free addresses', () => {
    expect(evaluateWith([aSubnet({ availableIpAddressCount: 16 })])[0]?.status).toBe('pass');
  });

  it('fails at medium when some subnets are low', () => {
    const [finding] = evaluateWith([
      aSubnet({ id: 'subnet-0a', availableIpAddressCount: 3 }),
      aSubnet({ id: 'subnet-0b', availableIpAddressCount: 200 }),
    ]);
    expect(finding?.status).toBe('fail');
    expect(finding?.severity).toBe('medium');
    expect(finding?.message).toContain('subnet-0a (3)');
  });

  it('fails at high when all subnets are low', () => {
    const [finding] = evaluateWith([aSubnet({ availableIpAddressCount: 0 })]);
    expect(finding?.severity).toBe('high');
    expect(finding?.message).toContain('InsufficientFreeAddressesInSubnet');
  });

  it('does not claim launches fail now while the low subnets still have addresses', () => {
    const [finding] = evaluateWith([
      aSubnet({ id: 'subnet-0a', availableIpAddressCount: 3 }),
      aSubnet({ id: 'subnet-0b', availableIpAddressCount: 0 }),
    ]);
    expect(finding?.severity).toBe('high');
    expect(finding?.message).not.toContain('Launches fail with');
    expect(finding?.message).toContain('once the last addresses are used');
  });

  describe('material facts', () => {
    const scan = (subnets: Subnet[]) => {
      const facts = someAwsFacts({ subnets: ok({ queries: [], subnets }) });
      const inventory = anAwsInventory([aNodeClassObject()], facts);
      const [finding] = runChecks(inventory, [subnetsHaveFreeIps], { now }).findings;
      return finding;
    };
    const roomy = aSubnet({ id: 'subnet-0b', availableIpAddressCount: 200 });

    it('keeps the material hash when a low subnet goes from 3 to 4 free addresses', () => {
      // Act
      const first = scan([aSubnet({ id: 'subnet-0a', availableIpAddressCount: 3 }), roomy]);
      const later = scan([aSubnet({ id: 'subnet-0a', availableIpAddressCount: 4 }), roomy]);

      // Assess
      expect(first?.message).toContain('subnet-0a (3)');
      expect(later?.message).toContain('subnet-0a (4)');
      expect(later?.materialHash).toBe(first?.materialHash);
    });

    it('changes the material hash when another subnet is the one running low', () => {
      // Act
      const first = scan([aSubnet({ id: 'subnet-0a', availableIpAddressCount: 3 }), roomy]);
      const later = scan([
        aSubnet({ id: 'subnet-0a', availableIpAddressCount: 200 }),
        aSubnet({ id: 'subnet-0b', availableIpAddressCount: 3 }),
      ]);

      // Assess: same severity and status, another failing subnet.
      expect(later?.severity).toBe(first?.severity);
      expect(later?.materialHash).not.toBe(first?.materialHash);
    });

    it('changes the material hash when a second subnet runs low as well', () => {
      // Act
      const first = scan([aSubnet({ id: 'subnet-0a', availableIpAddressCount: 3 }), roomy]);
      const later = scan([
        aSubnet({ id: 'subnet-0a', availableIpAddressCount: 3 }),
        aSubnet({ id: 'subnet-0b', availableIpAddressCount: 10 }),
        aSubnet({ id: 'subnet-0c', availableIpAddressCount: 200 }),
      ]);

      // Assess
      expect(later?.severity).toBe('medium');
      expect(later?.materialHash).not.toBe(first?.materialHash);
    });
  });

  it('reports an error when subnets could not be read', () => {
    const facts = someAwsFacts({ subnets: throttled('ec2:DescribeSubnets') });
    const [finding] = subnetsHaveFreeIps.evaluate(anAwsInventory([aNodeClassObject()], facts), {
      now,
    });
    expect(finding?.status).toBe('error');
  });
});
