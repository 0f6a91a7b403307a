import { formatDateTime, type Locale } from './format';

// A device's track and its replay, without the DOM: the positions of its messages in time
// order, a clock that steps through them, and the window's inputs read and written in the
// profile's time zone.

export interface TrackPoint {
  /** The position's time (ms): GPS time, else the message time. */
  at: number;
  iso: string;
  lat: number;
  lon: number;
}

export interface MessageWithPosition {
  SentFromDevice?: string | null;
  ReceivedAtServer?: string | null;
  Position?: { Latitude?: number | null; Longitude?: number | null; GpsTimestamp?: string | null } | null;
}

/** The positions of `messages`, oldest first (messages without one are left out). */
export function trackOf(messages: readonly MessageWithPosition[]): TrackPoint[] {
  const points: TrackPoint[] = [];
  for (const m of messages) {
    const lat = m.Position?.Latitude;
    const lon = m.Position?.Longitude;
    if (typeof lat !== 'number' || typeof lon !== 'number') continue;
    const iso = m.Position?.GpsTimestamp ?? m.SentFromDevice ?? m.ReceivedAtServer;
    const at = iso ? Date.parse(iso) : Number.NaN;
    if (!iso || Number.isNaN(at)) continue;
    points.push({ at, iso, lat, lon });
  }
  return points.sort((a, b) => a.at - b.at);
}

export const SPEEDS = [1, 4, 16, 60] as const;
export type Speed = (typeof SPEEDS)[number];

/**
 * Steps through a track's positions: at 1× one position a second, at 60× sixty. (Not
 * wall-clock time: a track has gaps of hours, which a time-true replay would sit through.)
 * `tick` is given the time since the last frame; it never skips past the end and stops
 * there.
 */
export class ReplayClock {
  index = 0;
  playing = false;
  speed: Speed = 1;
  private carry = 0;

  constructor(readonly length: number) {}

  get last(): number {
    return Math.max(0, this.length - 1);
  }

  play(): void {
    if (this.length < 2) return;
    if (this.index >= this.last) this.index = 0;
    this.carry = 0;
    this.playing = true;
  }

  pause(): void {
    this.playing = false;
  }

  setSpeed(speed: Speed): void {
    this.speed = speed;
  }

  seek(index: number): void {
    this.index = Math.min(this.last, Math.max(0, Math.round(index)));
    this.carry = 0;
  }

  /** Advances by `elapsedMs` of real time; true when the index moved. */
  tick(elapsedMs: number): boolean {
    if (!this.playing || elapsedMs <= 0) return false;
    this.carry += (elapsedMs * this.speed) / 1000;
    const steps = Math.floor(this.carry);
    if (steps === 0) return false;
    this.carry -= steps;
    const before = this.index;
    this.index = Math.min(this.last, this.index + steps);
    if (this.index >= this.last) this.playing = false;
    return this.index !== before;
  }
}

function zoneParts(ms: number, zone: string | undefined): Record<string, number> {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(ms));
  const out: Record<string, number> = {};
  for (const p of parts) if (p.type !== 'literal') out[p.type] = Number(p.value);
  return out;
}

/** The zone's offset from UTC at `ms` (ms; Intl knows the zone rules, we only read them). */
function offsetAt(ms: number, zone: string | undefined): number {
  const p = zoneParts(ms, zone);
  const wall = Date.UTC(p.year ?? 1970, (p.month ?? 1) - 1, p.day ?? 1, p.hour ?? 0, p.minute ?? 0, p.second ?? 0);
  return wall - Math.floor(ms / 1000) * 1000;
}

const pad = (n: number | undefined, width = 2): string => String(n ?? 0).padStart(width, '0');

/** `YYYY-MM-DDTHH:mm` (what a `datetime-local` input holds) for `ms` in `zone`. */
export function toZonedInput(ms: number, zone: string | undefined): string {
  const p = zoneParts(ms, zone);
  return `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}`;
}

/** The instant a `datetime-local` value means in `zone`; null when it is not a time. */
export function fromZonedInput(value: string, zone: string | undefined): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value.trim());
  if (!m) return null;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  const wall = Date.UTC(y ?? 0, (mo ?? 1) - 1, d ?? 1, h ?? 0, mi ?? 0, Number.isNaN(s) ? 0 : s ?? 0);
  if (Number.isNaN(wall)) return null;
  // The offset at the wall time read as UTC, then corrected once (enough across a change).
  let guess = wall - offsetAt(wall, zone);
  guess = wall - offsetAt(guess, zone);
  return guess;
}

/**
 * A `datetime-local` value shown back as the profile's culture writes it, in its zone (a
 * browser writes the input itself in its own locale, often US): '' when it is not a time.
 */
export function typedBack(value: string, zone: string | undefined, locale?: Locale): string {
  const at = fromZonedInput(value, zone);
  if (at === null) return '';
  const iso = new Date(at).toISOString();
  return locale ? formatDateTime(iso, locale) : formatDateTime(iso);
}

/** `YYYY-MM-DDT00:00` of the day `days` before the one `ms` falls on in `zone`. */
export function startOfDayBefore(ms: number, days: number, zone: string | undefined): string {
  const [date = ''] = toZonedInput(ms, zone).split('T');
  const [y, m, d] = date.split('-').map(Number);
  const day = new Date(Date.UTC(y ?? 1970, (m ?? 1) - 1, (d ?? 1) - days));
  return `${day.toISOString().slice(0, 10)}T00:00`;
}
