import { describe, expect, it } from 'vitest';
import { escalationLines, untilWords } from '../src/pages/alert-escalation';

const now = Date.parse('2026-03-01T10:00:00Z');
const policy = {
  PolicyId: '4',
  PolicyName: 'Lone worker',
  StepsFired: 2,
  StepCount: 3,
  CurrentStep: { Number: 2, AfterMinutes: 10, Instructions: 'Call the site supervisor.' },
  NextStepAt: '2026-03-01T10:20:00Z',
};

describe('the alert page escalation box', () => {
  it('shows nothing for an alert that follows no policy', () => {
    expect(escalationLines({ Status: 'Open', Escalation: null }, now)).toBeNull();
    expect(escalationLines({ Status: 'Open' }, now)).toBeNull();
  });

  it('shows the current step, its instructions and the next step time', () => {
    const lines = escalationLines({ Status: 'Open', Escalation: policy }, now);
    expect(lines?.title).toBe('Policy "Lone worker": step 2 of 3');
    expect(lines?.instructions).toBe('Call the site supervisor.');
    expect(lines?.next).toMatch(/^Next step: .* \(in 20 min\)$/);
  });

  it('before the first step, and once done, stopped or deleted', () => {
    const first = escalationLines({ Status: 'Open', Escalation: { ...policy, StepsFired: 0, CurrentStep: null } }, now);
    expect(first?.title).toBe('Policy "Lone worker": no step has fired yet (3 in all).');
    expect(first?.instructions).toBeNull();
    expect(first?.next).toMatch(/^First step: /);
    const done = { ...policy, NextStepAt: null };
    expect(escalationLines({ Status: 'Open', Escalation: done }, now)?.next).toBe('This was the last step.');
    expect(escalationLines({ Status: 'Acknowledged', Escalation: done }, now)?.next).toBe('Escalation stopped (acknowledged).');
    expect(escalationLines({ Status: 'Open', Escalation: { ...done, PolicyId: null } }, now)?.next).toBe(
      'The policy was deleted: no further step fires.',
    );
    const bare = { ...policy, CurrentStep: { Number: 1, AfterMinutes: 0, Instructions: null } };
    expect(escalationLines({ Status: 'Open', Escalation: bare }, now)?.instructions).toBe('This step has no instructions.');
  });

  it('says when the next step is due in minutes', () => {
    expect(untilWords('2026-03-01T10:00:30Z', now)).toBe('in 1 min');
    expect(untilWords('2026-03-01T09:59:00Z', now)).toBe('due now');
  });
});
