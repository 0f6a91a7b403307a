// The "Working alone" board's logic without the DOM (DESIGN §11, issue 45): the order of
// the current sessions (most urgent first), the counts per state, the live countdown to
// the next due time, "x ago", the person watched, and the duration an extension sends.
import type { MonitoringSession, Schemas } from './api';
import { t } from './i18n';
import { formatAge } from './format';

/** The states the API answers, most urgent first. */
export const MONITORING_STATES = ['Alerting', 'Overdue', 'DueSoon', 'Ok'] as const;
export type MonitoringState = (typeof MONITORING_STATES)[number];

export function isMonitoringState(s: string | null | undefined): s is MonitoringState {
  return (MONITORING_STATES as readonly string[]).includes(s ?? '');
}

/** What the order and the countdown read of a session. */
export type SessionTimes = Pick<MonitoringSession, 'State' | 'NextDueAt' | 'NextDueAct' | 'MonitoringSessionId'>;

/** A session of a tenant: its id is unique only within its tenant. */
export function sessionKey(s: Pick<MonitoringSession, 'TenantCode' | 'DeviceId'>): string {
  return `${s.TenantCode}/${s.DeviceId}`;
}

function rank(state: string | null | undefined): number {
  const i = (MONITORING_STATES as readonly string[]).indexOf(state ?? '');
  // A state this console does not know yet is shown first: it may be worse than any.
  return i < 0 ? -1 : i;
}

function dueAt(s: SessionTimes): number {
  const at = s.NextDueAt ? Date.parse(s.NextDueAt) : NaN;
  return Number.isNaN(at) ? Number.POSITIVE_INFINITY : at;
}

/**
 * The state at `now`: the one read, or worse once the clock says so — the session's own
 * rule (docs/monitoring.md, "State") applied between two reads, so the badge turns when
 * the due time passes rather than at the next read: `DueSoon` from `ReminderAt`,
 * `Overdue` from `NextDueAt`, `Alerting` once `GraceMinutes` have passed after it.
 */
export function stateAt(
  s: Pick<MonitoringSession, 'State' | 'NextDueAt' | 'ReminderAt' | 'GraceMinutes'>,
  now: number,
): string {
  const read = s.State ?? '';
  if (!isMonitoringState(read)) return read;
  const due = s.NextDueAt ? Date.parse(s.NextDueAt) : NaN;
  if (Number.isNaN(due)) return read;
  const reminder = s.ReminderAt ? Date.parse(s.ReminderAt) : NaN;
  let clock: MonitoringState = 'Ok';
  if (now >= due + (s.GraceMinutes ?? 0) * 60_000) clock = 'Alerting';
  else if (now >= due) clock = 'Overdue';
  else if (!Number.isNaN(reminder) && now >= reminder) clock = 'DueSoon';
  return rank(read) <= rank(clock) ? read : clock;
}

/** Alerting, Overdue, DueSoon, Ok; then the soonest due (the longest overdue) first. */
export function compareSessions(a: SessionTimes, b: SessionTimes): number {
  const byState = rank(a.State) - rank(b.State);
  if (byState !== 0) return byState;
  const ad = dueAt(a);
  const bd = dueAt(b);
  if (ad !== bd) return ad < bd ? -1 : 1;
  return a.MonitoringSessionId.localeCompare(b.MonitoringSessionId, 'en', { numeric: true });
}

export function sortSessions<T extends SessionTimes>(sessions: readonly T[]): T[] {
  return [...sessions].sort(compareSessions);
}

/** How many sessions are in each state (an unknown state counts nowhere). */
export function countByState(sessions: readonly Pick<MonitoringSession, 'State'>[]): Record<MonitoringState, number> {
  const counts: Record<MonitoringState, number> = { Alerting: 0, Overdue: 0, DueSoon: 0, Ok: 0 };
  for (const s of sessions) if (isMonitoringState(s.State)) counts[s.State] += 1;
  return counts;
}

/** `12:04`, `1:02:03`, `2 d 3:04:05` (whole seconds). */
export function formatClock(totalSeconds: number): string {
  const s = Math.max(0, Math.floor(totalSeconds));
  const two = (n: number): string => String(n).padStart(2, '0');
  const days = Math.floor(s / 86400);
  const hours = Math.floor((s % 86400) / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const seconds = s % 60;
  const clock = days > 0 || hours > 0 ? `${hours}:${two(minutes)}:${two(seconds)}` : `${minutes}:${two(seconds)}`;
  return days > 0 ? t('monitoring.clockDays', { d: days, clock }) : clock;
}

export interface Countdown {
  /** `due`: before the due time; `overdue`: past it; `none`: nothing due (ended). */
  phase: 'due' | 'overdue' | 'none';
  /** What is due: a check-in, or the end (end or extend by the planned end). */
  act: 'CheckIn' | 'End';
  /** Whole seconds to the due time, or since it. */
  seconds: number;
  text: string;
}

/**
 * The countdown to `NextDueAt` at `now`: "check-in due in 12:04", "end due in 4:00",
 * "check-in overdue by 3:10". The seconds left are rounded up (it reads 0:00 only at the
 * due time), the seconds past down.
 */
export function countdown(s: Pick<MonitoringSession, 'NextDueAt' | 'NextDueAct'>, now: number): Countdown {
  const act = s.NextDueAct === 'End' ? 'End' : 'CheckIn';
  const at = s.NextDueAt ? Date.parse(s.NextDueAt) : NaN;
  if (Number.isNaN(at)) return { phase: 'none', act, seconds: 0, text: t('alert.none') };
  const left = at - now;
  if (left > 0) {
    const seconds = Math.ceil(left / 1000);
    const key = act === 'End' ? 'monitoring.endDueIn' : 'monitoring.checkInDueIn';
    return { phase: 'due', act, seconds, text: t(key, { clock: formatClock(seconds) }) };
  }
  const seconds = Math.floor((now - at) / 1000);
  const key = act === 'End' ? 'monitoring.endOverdueBy' : 'monitoring.checkInOverdueBy';
  return { phase: 'overdue', act, seconds, text: t(key, { clock: formatClock(seconds) }) };
}

/** "2 min ago"; "no check-in yet" when there was none. */
export function agoWords(iso: string | null | undefined, now: number): string {
  if (!iso || Number.isNaN(Date.parse(iso))) return t('monitoring.noCheckIn');
  return t('monitoring.ago', { age: formatAge(iso, now) });
}

/** The largest duration a session may have (a week), as the API holds it. */
export const MAX_DURATION_MINUTES = 10_080;

/**
 * The `DurationMinutes` that extends `s` by `minutes`: past its planned end, or past now
 * when the planned end has already gone by (an overdue session gets the time from now).
 * Counted from the start, whole minutes, at most a week.
 */
export function extendedDuration(
  s: Pick<MonitoringSession, 'StartedAt' | 'PlannedEndAt' | 'DurationMinutes'>,
  minutes: number,
  now: number,
): number {
  const start = Date.parse(s.StartedAt);
  const end = Date.parse(s.PlannedEndAt);
  if (Number.isNaN(start) || Number.isNaN(end)) return Math.min(MAX_DURATION_MINUTES, s.DurationMinutes + minutes);
  const from = Math.max(end, now);
  const wanted = Math.ceil((from + minutes * 60_000 - start) / 60_000);
  return Math.min(MAX_DURATION_MINUTES, Math.max(s.DurationMinutes + 1, wanted));
}

/** A person as the board shows them: first and last name, else the login. */
export interface PersonName {
  FirstName?: string | null;
  LastName?: string | null;
  Username?: string | null;
}

export function personName(u: PersonName | null | undefined): string {
  if (!u) return '';
  return [u.FirstName, u.LastName].filter((x) => x && x.trim()).join(' ') || u.Username || '';
}

/**
 * The device a stream event's record names: its own `DeviceId` (and `TenantCode`), else
 * those of a record it holds one level down (`{"Session": {…}}`), for a kind whose shape
 * this console does not know yet.
 */
export function namedDevice(record: unknown): { TenantCode: string | null; DeviceId: string } | null {
  const own = (value: unknown): { TenantCode: string | null; DeviceId: string } | null => {
    if (!value || typeof value !== 'object') return null;
    const r = value as Record<string, unknown>;
    if (typeof r.DeviceId !== 'string' || !r.DeviceId) return null;
    return { TenantCode: typeof r.TenantCode === 'string' ? r.TenantCode : null, DeviceId: r.DeviceId };
  };
  const top = own(record);
  if (top || !record || typeof record !== 'object' || Array.isArray(record)) return top;
  for (const value of Object.values(record as Record<string, unknown>)) {
    const inner = own(value);
    if (inner) return inner;
  }
  return null;
}

/** Whether a record naming (tenant, device) is about one of `keys` (a missing tenant matches any). */
export function aboutListed(named: { TenantCode: string | null; DeviceId: string } | null, keys: Iterable<string>): boolean {
  if (!named) return false;
  for (const key of keys) {
    const slash = key.indexOf('/');
    const tc = key.slice(0, slash);
    const id = key.slice(slash + 1);
    if (id === named.DeviceId && (named.TenantCode === null || named.TenantCode === tc)) return true;
  }
  return false;
}

/**
 * A `monitoring` stream event (docs/monitoring.md "Events"): a line of a session's
 * history (`MonitoringSessionEvent`) with the session's `DeviceId` and the `Session` as it
 * was then (`State` null and `EndedAt` set once ended). Not in the OpenAPI document (the
 * stream's records are not): typed here from its schemas.
 */
export type MonitoringStreamEvent = Schemas['MonitoringSessionEvent'] & { DeviceId: string; Session: MonitoringSession };

/** The record of a `monitoring` event, if it has the shape this console reads (else null). */
export function asMonitoringEvent(record: unknown): MonitoringStreamEvent | null {
  if (!record || typeof record !== 'object') return null;
  const r = record as Record<string, unknown>;
  const s = r.Session as Record<string, unknown> | null | undefined;
  if (typeof r.EventId !== 'string' || typeof r.Kind !== 'string' || !s || typeof s !== 'object') return null;
  if (typeof s.MonitoringSessionId !== 'string' || typeof s.TenantCode !== 'string' || typeof s.DeviceId !== 'string') return null;
  return record as MonitoringStreamEvent;
}

/** Whether a session record is of an ended session. */
export function hasEnded(s: Pick<MonitoringSession, 'EndedAt'>): boolean {
  return Boolean(s.EndedAt);
}

/** Ids (history lines', sessions') in the order the server gave them: numerically. */
function compareIds(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}

interface Held {
  session: MonitoringSession;
  /** The board's change count when this was last written (what a read started before cannot undo). */
  mark: number;
  /** The last stream event applied to it (a replay after a reconnection is not applied twice). */
  eventId: string | null;
}

/**
 * The current sessions a board (or the alert page's panel) shows, by `sessionKey`, kept
 * from three sources: `monitoring` stream events (`event`: upserted from `Session`, gone
 * once it ended), the answers of this console's own writes (`put`, `remove`), and full
 * reads (`read`, the safety net after a gap in the stream). A read answers what was true
 * when it was served, so it cannot undo what an event changed after it started (`mark()`
 * is taken then): a session changed, started or ended since stays as the event left it.
 * A stream event replayed after a reconnection, or one of a session older than the one
 * held, changes nothing.
 */
export class SessionBoard {
  private readonly held = new Map<string, Held>();
  /** Sessions ended since, by key: a read started before cannot bring them back. */
  private readonly ended = new Map<string, { id: string; mark: number }>();
  private changes = 0;

  /** Taken when a read starts, given to `read` with its answer. */
  mark(): number {
    return this.changes;
  }

  get size(): number {
    return this.held.size;
  }

  keys(): IterableIterator<string> {
    return this.held.keys();
  }

  get(key: string): MonitoringSession | undefined {
    return this.held.get(key)?.session;
  }

  /** The sessions held, most urgent first at `now` (the state as the clock turns it). */
  sorted(now: number): MonitoringSession[] {
    return [...this.held.values()]
      .map((h) => ({ ...h.session, State: stateAt(h.session, now), held: h.session }))
      .sort(compareSessions)
      .map((x) => x.held);
  }

  /** A `monitoring` stream event: whether the board changed. */
  event(e: MonitoringStreamEvent): boolean {
    return this.write(e.Session, e.EventId);
  }

  /** A session as one of this console's writes answered it (a check-in, an extension). */
  put(s: MonitoringSession): boolean {
    return this.write(s, null);
  }

  /** The session `id` at `key` ended here (a force stop answered). */
  remove(key: string, id: string): boolean {
    this.ended.set(key, { id, mark: ++this.changes });
    const held = this.held.get(key);
    if (!held || held.session.MonitoringSessionId !== id) return false;
    this.held.delete(key);
    return true;
  }

  private write(s: MonitoringSession, eventId: string | null): boolean {
    const key = sessionKey(s);
    const id = s.MonitoringSessionId;
    const held = this.held.get(key);
    // An older session of the device than the one held: long gone.
    if (held && compareIds(id, held.session.MonitoringSessionId) < 0) return false;
    const gone = this.ended.get(key);
    if (gone && compareIds(id, gone.id) <= 0 && !hasEnded(s)) return false;
    if (hasEnded(s)) return this.remove(key, id);
    if (held && held.session.MonitoringSessionId === id) {
      if (eventId !== null && held.eventId !== null && compareIds(eventId, held.eventId) <= 0) return false;
      // Older than what is held (every write of a session moves its Timestamp): a write's
      // answer after its own event, an event replayed after a read.
      if (Date.parse(s.Timestamp) < Date.parse(held.session.Timestamp)) return false;
    }
    const keepEvent = held && held.session.MonitoringSessionId === id ? held.eventId : null;
    this.held.set(key, { session: s, mark: ++this.changes, eventId: eventId ?? keepEvent });
    return true;
  }

  /**
   * Every current session in the read's scope, as a read started at `since` (`mark()`)
   * answered: the ones held updated, new ones added, the ones not listed gone — except
   * what changed after the read started. Whether the board changed.
   */
  read(list: readonly MonitoringSession[], since: number): boolean {
    let changed = false;
    const listed = new Set<string>();
    for (const s of list) {
      const key = sessionKey(s);
      listed.add(key);
      const held = this.held.get(key);
      if (held && held.mark > since) continue;
      const gone = this.ended.get(key);
      if (gone && gone.mark > since && compareIds(s.MonitoringSessionId, gone.id) <= 0) continue;
      if (held && held.session.MonitoringSessionId === s.MonitoringSessionId && held.session.ETag === s.ETag && held.session.State === s.State) continue;
      const eventId = held && held.session.MonitoringSessionId === s.MonitoringSessionId ? held.eventId : null;
      this.held.set(key, { session: s, mark: ++this.changes, eventId });
      changed = true;
    }
    for (const [key, held] of this.held) {
      if (listed.has(key) || held.mark > since) continue;
      this.held.delete(key);
      changed = true;
    }
    // What ended before the read started, the read already leaves out.
    for (const [key, gone] of this.ended) if (gone.mark <= since) this.ended.delete(key);
    return changed;
  }
}
