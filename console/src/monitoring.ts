// The "Working alone" board's logic without the DOM (DESIGN §11, issue 45): the order of
// the current sessions (most urgent first), the counts per state, the live countdown to
// the next due time, "x ago", the person watched, and the duration an extension sends.
import type { MonitoringSession } from './api';
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
