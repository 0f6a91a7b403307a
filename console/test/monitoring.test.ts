import { describe, expect, it } from 'vitest';
import type { MonitoringSession } from '../src/api';
import {
  aboutListed,
  agoWords,
  countByState,
  countdown,
  extendedDuration,
  formatClock,
  namedDevice,
  personName,
  sessionKey,
  sortSessions,
  stateAt,
} from '../src/monitoring';

const now = Date.parse('2026-12-02T10:00:00Z');
const at = (seconds: number): string => new Date(now + seconds * 1000).toISOString();

function session(id: string, extra: Partial<MonitoringSession> = {}): MonitoringSession {
  return {
    MonitoringSessionId: id,
    TenantCode: '1000',
    DeviceId: `dev-${id}`,
    StartedAt: at(-3600),
    StartedBy: 'op@example.com',
    PlannedEndAt: at(3600),
    DurationMinutes: 120,
    CheckInIntervalMinutes: 30,
    GraceMinutes: 5,
    ReminderMinutes: 5,
    NoMotionMinutes: 0,
    CheckInCount: 0,
    MissedCheckInCount: 0,
    NextDueAt: at(600),
    NextDueAct: 'CheckIn',
    ReminderAt: at(300),
    State: 'Ok',
    Timestamp: at(-3600),
    ETag: `e${id}`,
    ...extra,
  };
}

describe('the working-alone board order', () => {
  it('puts Alerting, Overdue, DueSoon, Ok first, then the soonest due, then the id', () => {
    const list = [
      session('1', { State: 'Ok', NextDueAt: at(900) }),
      session('2', { State: 'DueSoon', NextDueAt: at(60) }),
      session('3', { State: 'Ok', NextDueAt: at(120) }),
      session('4', { State: 'Alerting', NextDueAt: at(-30) }),
      session('5', { State: 'Overdue', NextDueAt: at(-10) }),
      session('6', { State: 'Alerting', NextDueAt: at(-600) }),
      session('10', { State: 'Ok', NextDueAt: at(120) }),
      session('7', { State: 'Ok', NextDueAt: null }),
    ];
    expect(sortSessions(list).map((s) => s.MonitoringSessionId)).toEqual(['6', '4', '5', '2', '3', '10', '1', '7']);
    // The list given is not reordered.
    expect(list[0]?.MonitoringSessionId).toBe('1');
  });

  it('shows a state it does not know first (it may be worse than any)', () => {
    const list = [session('1', { State: 'Alerting' }), session('2', { State: 'Panicking' })];
    expect(sortSessions(list).map((s) => s.MonitoringSessionId)).toEqual(['2', '1']);
  });

  it('counts the sessions per state', () => {
    const counts = countByState([{ State: 'Ok' }, { State: 'Ok' }, { State: 'Alerting' }, { State: null }, { State: 'Other' }]);
    expect(counts).toEqual({ Alerting: 1, Overdue: 0, DueSoon: 0, Ok: 2 });
  });

  it('keys a session by its tenant and device', () => {
    expect(sessionKey(session('3'))).toBe('1000/dev-3');
  });
});

describe('the countdown', () => {
  it('formats minutes and seconds, hours, days', () => {
    expect(formatClock(0)).toBe('0:00');
    expect(formatClock(59)).toBe('0:59');
    expect(formatClock(724)).toBe('12:04');
    expect(formatClock(3600)).toBe('1:00:00');
    expect(formatClock(3723.9)).toBe('1:02:03');
    expect(formatClock(2 * 86400 + 3 * 3600 + 4 * 60 + 5)).toBe('2 d 3:04:05');
    expect(formatClock(-5)).toBe('0:00');
  });

  it('says what is due and in how long, rounding the time left up', () => {
    const c = countdown({ NextDueAt: at(724), NextDueAct: 'CheckIn' }, now);
    expect(c).toMatchObject({ phase: 'due', act: 'CheckIn', seconds: 724, text: 'check-in due in 12:04' });
    expect(countdown({ NextDueAt: at(724), NextDueAct: 'CheckIn' }, now + 500).text).toBe('check-in due in 12:04');
    expect(countdown({ NextDueAt: at(724), NextDueAct: 'CheckIn' }, now + 1000).text).toBe('check-in due in 12:03');
    expect(countdown({ NextDueAt: at(240), NextDueAct: 'End' }, now).text).toBe('end due in 4:00');
  });

  it('counts up once the due time passed', () => {
    expect(countdown({ NextDueAt: at(0), NextDueAct: 'CheckIn' }, now)).toMatchObject({ phase: 'overdue', seconds: 0, text: 'check-in overdue by 0:00' });
    expect(countdown({ NextDueAt: at(-190), NextDueAct: 'CheckIn' }, now).text).toBe('check-in overdue by 3:10');
    expect(countdown({ NextDueAt: at(-190), NextDueAct: 'End' }, now + 999).text).toBe('end overdue by 3:10');
  });

  it('says nothing is due without a due time', () => {
    expect(countdown({ NextDueAt: null, NextDueAct: null }, now)).toMatchObject({ phase: 'none', text: '—' });
  });

  it('says how long ago the last check-in was', () => {
    expect(agoWords(at(-120), now)).toBe('2 min ago');
    expect(agoWords(at(-12), now)).toBe('12 s ago');
    expect(agoWords(null, now)).toBe('No check-in yet');
  });
});

describe('the state between two reads', () => {
  const s = session('1', { NextDueAt: at(600), ReminderAt: at(300), GraceMinutes: 5, State: 'Ok' });
  it('turns by the clock: due soon at the reminder, overdue at the due time, alerting after the grace', () => {
    expect(stateAt(s, now)).toBe('Ok');
    expect(stateAt(s, now + 300_000)).toBe('DueSoon');
    expect(stateAt(s, now + 600_000)).toBe('Overdue');
    expect(stateAt(s, now + 600_000 + 5 * 60_000 - 1)).toBe('Overdue');
    expect(stateAt(s, now + 600_000 + 5 * 60_000)).toBe('Alerting');
  });
  it('never shows better than what was read', () => {
    expect(stateAt({ ...s, State: 'Alerting' }, now)).toBe('Alerting');
    expect(stateAt({ ...s, State: 'Overdue' }, now + 300_000)).toBe('Overdue');
    expect(stateAt({ ...s, State: 'Panicking' }, now + 900_000)).toBe('Panicking');
    expect(stateAt({ ...s, NextDueAt: null }, now)).toBe('Ok');
  });
  it('goes from OK to overdue with no reminder, and straight to alerting with no grace', () => {
    const plain = { ...s, ReminderAt: null, GraceMinutes: 0 };
    expect(stateAt(plain, now + 599_999)).toBe('Ok');
    expect(stateAt(plain, now + 600_000)).toBe('Alerting');
  });
});

describe('extending a session', () => {
  it('adds the minutes to the planned end (a duration counted from the start)', () => {
    // Started an hour ago, 120 minutes, ends in an hour: +30 is 150.
    expect(extendedDuration(session('1'), 30, now)).toBe(150);
    expect(extendedDuration(session('1'), 60, now)).toBe(180);
  });
  it('counts from now once the planned end has passed', () => {
    const late = session('1', { StartedAt: at(-7200), PlannedEndAt: at(-600), DurationMinutes: 110 });
    expect(extendedDuration(late, 30, now)).toBe(150);
  });
  it('stays within a week', () => {
    const long = session('1', { StartedAt: at(-60), PlannedEndAt: at(10_079 * 60 - 60), DurationMinutes: 10_079 });
    expect(extendedDuration(long, 60, now)).toBe(10_080);
  });
});

describe('who and which device', () => {
  it('names a person by first and last name, else the login', () => {
    expect(personName({ FirstName: 'Will', LastName: 'Worker', Username: 'will@example.com' })).toBe('Will Worker');
    expect(personName({ FirstName: ' ', LastName: null, Username: 'will@example.com' })).toBe('will@example.com');
    expect(personName(null)).toBe('');
  });
  it('finds the device a stream record names among the listed ones', () => {
    const keys = ['1000/van-1', '1001/van-2'];
    expect(aboutListed(namedDevice({ DeviceId: 'van-1', TenantCode: '1000' }), keys)).toBe(true);
    expect(aboutListed(namedDevice({ DeviceId: 'van-1', TenantCode: '1001' }), keys)).toBe(false);
    expect(aboutListed(namedDevice({ DeviceId: 'van-2' }), keys)).toBe(true);
    expect(aboutListed(namedDevice({ DeviceId: 'van-3', TenantCode: '1000' }), keys)).toBe(false);
    expect(aboutListed(namedDevice({ Kind: 'CheckIn', Session: { DeviceId: 'van-1', TenantCode: '1000' } }), keys)).toBe(true);
    expect(namedDevice({ Kind: 'CheckIn', Session: { Note: 'x' } })).toBeNull();
    expect(namedDevice('text')).toBeNull();
    expect(namedDevice({ DeviceId: 7 })).toBeNull();
    expect(aboutListed(null, keys)).toBe(false);
  });
});
