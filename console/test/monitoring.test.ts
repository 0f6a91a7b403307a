import { describe, expect, it } from 'vitest';
import type { MonitoringSession } from '../src/api';
import type { MonitoringStreamEvent } from '../src/monitoring';
import {
  aboutListed,
  agoWords,
  countByState,
  countdown,
  extendedDuration,
  formatClock,
  namedDevice,
  personName,
  SessionBoard,
  asMonitoringEvent,
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

/** A `monitoring` stream event: line `eventId` of kind `kind`, with the session as it then was. */
function line(eventId: number, kind: string, s: MonitoringSession): MonitoringStreamEvent {
  return {
    EventId: String(eventId),
    MonitoringSessionId: s.MonitoringSessionId,
    At: s.Timestamp,
    Kind: kind,
    Actor: 'op@example.com',
    MoMessageId: null,
    Detail: null,
    DeviceId: s.DeviceId,
    Session: s,
  };
}

const ended = (s: MonitoringSession, seconds: number): MonitoringSession => ({
  ...s,
  State: null,
  NextDueAt: null,
  NextDueAct: null,
  ReminderAt: null,
  EndedAt: at(seconds),
  EndKind: 'Normal',
  Timestamp: at(seconds),
  ETag: `${s.ETag}-end`,
});

const ids = (board: SessionBoard): string[] => board.sorted(now).map((s) => s.MonitoringSessionId);

describe('the board kept from the stream', () => {
  it('adds a session started, updates it on a check-in, removes it once ended', () => {
    const board = new SessionBoard();
    const started = session('1', { State: 'Ok' });
    expect(board.event(line(10, 'Started', started))).toBe(true);
    expect(board.get(sessionKey(started))?.State).toBe('Ok');
    // Overdue by then (the clock), and alerting once the timer fired.
    const alerting = session('1', { State: 'Alerting', NextDueAt: at(-400), ReminderAt: null, MissedCheckInCount: 1, Timestamp: at(-10), ETag: 'e1b' });
    expect(board.event(line(11, 'MissedCheckIn', alerting))).toBe(true);
    expect(board.get(sessionKey(started))?.State).toBe('Alerting');
    // A check-in clears it: the session as the check-in left it.
    const checkedIn = session('1', { State: 'Ok', LastCheckInAt: at(0), CheckInCount: 1, NextDueAt: at(1800), ReminderAt: at(1500), Timestamp: at(0), ETag: 'e1c' });
    expect(board.event(line(12, 'CheckIn', checkedIn))).toBe(true);
    expect(board.get(sessionKey(started))).toEqual(checkedIn);
    expect(stateAt(board.get(sessionKey(started))!, now)).toBe('Ok');
    expect(board.event(line(13, 'Ended', ended(checkedIn, 5)))).toBe(true);
    expect(board.size).toBe(0);
  });

  it('sorts most urgent first as events change the states', () => {
    const board = new SessionBoard();
    board.event(line(1, 'Started', session('1', { NextDueAt: at(900) })));
    board.event(line(2, 'Started', session('2', { NextDueAt: at(600) })));
    board.event(line(3, 'Started', session('3', { NextDueAt: at(1200) })));
    expect(ids(board)).toEqual(['2', '1', '3']);
    board.event(line(4, 'Reminder', session('3', { State: 'DueSoon', NextDueAt: at(1200), Timestamp: at(-5) })));
    expect(ids(board)).toEqual(['3', '2', '1']);
    board.event(line(5, 'Overdue', session('1', { State: 'Alerting', NextDueAt: at(-600), Timestamp: at(-4) })));
    expect(ids(board)).toEqual(['1', '3', '2']);
    // By the clock too: a due time passed between two events is overdue now.
    board.event(line(6, 'Changed', session('2', { State: 'Ok', NextDueAt: at(-1), ReminderAt: null, Timestamp: at(-3) })));
    expect(ids(board)).toEqual(['1', '2', '3']);
    // A check-in of the alerting one: last (the latest due).
    board.event(line(7, 'CheckIn', session('1', { State: 'Ok', NextDueAt: at(1800), ReminderAt: at(1500), Timestamp: at(0) })));
    expect(ids(board)).toEqual(['2', '3', '1']);
  });

  it('does not apply an event twice, nor one older than the session held', () => {
    const board = new SessionBoard();
    const first = session('1');
    const later = session('1', { State: 'Ok', CheckInCount: 1, LastCheckInAt: at(0), Timestamp: at(0), ETag: 'e1b' });
    board.event(line(10, 'Started', first));
    board.event(line(11, 'CheckIn', later));
    // Replayed after a reconnection.
    expect(board.event(line(10, 'Started', first))).toBe(false);
    expect(board.event(line(11, 'CheckIn', later))).toBe(false);
    expect(board.get(sessionKey(first))?.CheckInCount).toBe(1);
    // A write's own answer that comes after a newer event changes nothing either.
    const newer = { ...later, Note: 'moved on', Timestamp: at(30), ETag: 'e1c' };
    board.event(line(12, 'Changed', newer));
    expect(board.put(later)).toBe(false);
    expect(board.get(sessionKey(first))?.Note).toBe('moved on');
  });

  it('replaces an ended session by the next one of the device, and never brings the old one back', () => {
    const board = new SessionBoard();
    const old = session('1');
    board.event(line(1, 'Started', old));
    board.event(line(2, 'Ended', ended(old, 0)));
    const next = session('2', { DeviceId: old.DeviceId });
    board.event(line(3, 'Started', next));
    expect(board.get(sessionKey(old))?.MonitoringSessionId).toBe('2');
    // A late line of the old session: not shown over the new one.
    expect(board.event(line(2, 'Ended', ended(old, 0)))).toBe(false);
    expect(board.event(line(1, 'Started', old))).toBe(false);
    expect(board.get(sessionKey(old))?.MonitoringSessionId).toBe('2');
    // Ended sessions' lines replayed: nothing to show.
    const other = new SessionBoard();
    other.event(line(2, 'Ended', ended(old, 0)));
    expect(other.event(line(1, 'Started', old))).toBe(false);
    expect(other.size).toBe(0);
  });

  it('keys sessions by tenant: the same device id in two tenants is two rows', () => {
    const board = new SessionBoard();
    board.event(line(1, 'Started', session('1', { TenantCode: '1001', DeviceId: 'van' })));
    board.event(line(2, 'Started', session('2', { TenantCode: '1002', DeviceId: 'van' })));
    expect(board.size).toBe(2);
    board.event(line(3, 'Ended', ended(session('1', { TenantCode: '1001', DeviceId: 'van' }), 0)));
    expect([...board.keys()]).toEqual(['1002/van']);
  });

  it('removes a session this console ended (a force stop) at once', () => {
    const board = new SessionBoard();
    const s = session('1');
    board.put(s);
    expect(board.remove(sessionKey(s), '1')).toBe(true);
    expect(board.size).toBe(0);
    // Its Ended line after: nothing more.
    expect(board.event(line(5, 'Ended', ended(s, 0)))).toBe(false);
  });
});

describe('a full read beside the stream (after a gap, the safety net)', () => {
  it('adds, updates and removes what the read lists', () => {
    const board = new SessionBoard();
    board.event(line(1, 'Started', session('1')));
    board.event(line(2, 'Started', session('2')));
    const since = board.mark();
    expect(board.read([session('2', { State: 'DueSoon', ETag: 'e2b' }), session('3')], since)).toBe(true);
    expect([...board.keys()].sort()).toEqual(['1000/dev-2', '1000/dev-3']);
    expect(board.get('1000/dev-2')?.State).toBe('DueSoon');
    // The same answer again: no change.
    expect(board.read([session('2', { State: 'DueSoon', ETag: 'e2b' }), session('3')], board.mark())).toBe(false);
  });

  it('cannot undo what an event changed while it was under way', () => {
    const board = new SessionBoard();
    const one = session('1');
    board.event(line(1, 'Started', one));
    const since = board.mark();
    // Meanwhile: a check-in of 1, a new session 2, and session 3 (which the read lists) ends.
    board.event(line(2, 'CheckIn', session('1', { CheckInCount: 1, Timestamp: at(0), ETag: 'e1b' })));
    board.event(line(3, 'Started', session('2')));
    board.event(line(4, 'Ended', ended(session('3'), 0)));
    // The read as served before all that.
    expect(board.read([one, session('3')], since)).toBe(false);
    expect(board.get('1000/dev-1')?.CheckInCount).toBe(1);
    expect(board.get('1000/dev-2')).toBeDefined();
    expect(board.get('1000/dev-3')).toBeUndefined();
    // A later read decides again.
    expect(board.read([session('1', { CheckInCount: 1, Timestamp: at(0), ETag: 'e1b' })], board.mark())).toBe(true);
    expect([...board.keys()]).toEqual(['1000/dev-1']);
  });

  it('reads the shape of a monitoring event, and refuses another', () => {
    const e = line(7, 'CheckIn', session('1'));
    expect(asMonitoringEvent(JSON.parse(JSON.stringify(e)))).toEqual(e);
    expect(asMonitoringEvent({ ...e, Session: null })).toBeNull();
    expect(asMonitoringEvent({ ...e, Session: { DeviceId: 'x' } })).toBeNull();
    expect(asMonitoringEvent({ DeviceId: 'x' })).toBeNull();
    expect(asMonitoringEvent('text')).toBeNull();
  });
});
