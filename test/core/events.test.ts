import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAmiStateChange, parseIamChange } from '../../lambda/core/events.js';

const examples = join(import.meta.dirname, '../../examples/events');
const example = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(examples, name), 'utf8')) as Record<string, unknown>;

describe('parseAmiStateChange', () => {
  it.each(['available', 'failed', 'deregistered', 'disabled'])(
    'accepts the %s example',
    (state) => {
      const parsed = parseAmiStateChange(example(`ami-state-change-${state}.json`));
      expect(parsed).toMatchObject({ ok: true, value: { detail: { State: state } } });
    }
  );

  it('drops states it does not handle with a reason', () => {
    const event = example('ami-state-change-available.json');
    const parsed = parseAmiStateChange({
      ...event,
      detail: { ...(event.detail as object), State: 'pending' },
    });
    expect(parsed).toEqual({
      ok: false,
      reason: 'ami-state-not-handled',
      detail: 'State "pending"',
    });
  });

  it('drops an event with a missing or odd ImageId, naming the field', () => {
    const event = example('ami-state-change-available.json');
    const parsed = parseAmiStateChange({
      ...event,
      detail: { State: 'available', ImageId: 'i-123' },
    });
    expect(parsed).toMatchObject({ ok: false, reason: 'malformed-event' });
    expect(parsed.ok ? '' : parsed.detail).toContain('detail.ImageId');
  });
});

describe('parseIamChange', () => {
  it('reads the role and the policy ARN of AttachRolePolicy', () => {
    expect(parseIamChange(example('iam-attach-role-policy.json'))).toEqual({
      ok: true,
      value: {
        eventId: expect.any(String),
        eventName: 'AttachRolePolicy',
        roleNames: ['KarpenterNodeRole-prod'],
        policyArns: ['arn:aws:iam::111122223333:policy/karpenter-node-extra'],
        instanceProfileNames: [],
      },
    });
  });

  it('reads the policy ARN of SetDefaultPolicyVersion and the profile of RemoveRoleFromInstanceProfile', () => {
    expect(parseIamChange(example('iam-set-default-policy-version.json'))).toMatchObject({
      ok: true,
      value: {
        roleNames: [],
        policyArns: ['arn:aws:iam::111122223333:policy/KarpenterControllerPolicy-prod'],
      },
    });
    expect(parseIamChange(example('iam-remove-role-from-instance-profile.json'))).toMatchObject({
      ok: true,
      value: {
        roleNames: ['KarpenterNodeRole-prod'],
        instanceProfileNames: ['KarpenterNodeInstanceProfile-prod'],
      },
    });
  });

  it('drops failed calls, unhandled names, non-default policy versions and odd parameters', () => {
    const event = example('iam-put-role-policy.json');
    const detail = event.detail as Record<string, unknown>;
    expect(
      parseIamChange({ ...event, detail: { ...detail, errorCode: 'AccessDenied' } })
    ).toMatchObject({
      ok: false,
      reason: 'iam-call-failed',
    });
    expect(
      parseIamChange({ ...event, detail: { ...detail, eventName: 'CreateUser' } })
    ).toMatchObject({
      ok: false,
      reason: 'iam-event-not-handled',
    });
    expect(
      parseIamChange({
        ...event,
        detail: {
          ...detail,
          eventName: 'CreatePolicyVersion',
          requestParameters: {
            policyArn: 'arn:aws:iam::111122223333:policy/p',
            setAsDefault: false,
          },
        },
      })
    ).toMatchObject({ ok: false, reason: 'policy-version-not-default' });
    expect(
      parseIamChange({ ...event, detail: { ...detail, requestParameters: {} } })
    ).toMatchObject({
      ok: false,
      reason: 'malformed-event',
    });
    expect(parseIamChange({ hello: 'world' })).toMatchObject({
      ok: false,
      reason: 'malformed-event',
    });
  });
});
