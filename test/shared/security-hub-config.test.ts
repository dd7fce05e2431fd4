import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../lambda/shared/config.js';

const ENV = {
  STATE_TABLE_NAME: 'state',
  FINDINGS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:111122223333:findings',
  AWS_REGION: 'eu-west-1',
};

describe('SECURITY_HUB', () => {
  it('is off unless set to true', () => {
    expect(loadConfig(ENV, 'scan-cluster').securityHub).toBe(false);
    expect(loadConfig({ ...ENV, SECURITY_HUB: 'true' }, 'scan-cluster').securityHub).toBe(true);
    expect(loadConfig({ ...ENV, SECURITY_HUB: 'false' }, 'ami-event').securityHub).toBe(false);
  });

  it('refuses anything but true or false, naming the variable', () => {
    expect(() => loadConfig({ ...ENV, SECURITY_HUB: 'yes' }, 'scan-cluster')).toThrow(
      /SECURITY_HUB/
    );
  });
});
