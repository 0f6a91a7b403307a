// The device list's own logic, without the DOM: a device's state, the filters, the order
// (last report, newest first) and a view that stays sorted while stream updates arrive.
// Everything here works in memory on what one paged read of the scope returned, so a
// keystroke or a burst of updates never waits for the server.
import type { Device } from './live';

/** The person a device is assigned to, as device reads show them (`AssignedUser`). */
export interface AssignedUser {
  UserId: string;
  TenantCode: string;
  Username: string;
  FirstName?: string | null;
  LastName?: string | null;
}

/** A device as the device screens read it (the shared `Device` plus what they show). */
export interface DeviceRecord extends Device {
  IridiumImei?: string | null;
  Status?: string | null;
  /** Null when none, and on stream events (which carry `UserId` alone). */
  AssignedUser?: AssignedUser | null;
}

/** The assigned person's name: first and last name, else their login; '' when none. */
export function userLabel(d: Pick<DeviceRecord, 'AssignedUser'>): string {
  const u = d.AssignedUser;
  if (!u) return '';
  return [u.FirstName, u.LastName].filter((x) => x && x.trim()).join(' ') || u.Username || u.UserId;
}

/**
 * A stream event's device over the one held: the stream's record names the user by
 * `UserId` alone, so the person read with the list stays while the id is the same.
 */
export function mergeDevice(held: DeviceRecord | undefined, incoming: DeviceRecord): DeviceRecord {
  if (incoming.AssignedUser || !held?.AssignedUser) return incoming;
  return incoming.UserId === held.UserId ? { ...incoming, AssignedUser: held.AssignedUser } : incoming;
}

/** What an open alert needs to be found for its device. */
export interface DeviceAlert {
  AlertId: string;
  TenantCode?: string | null;
  DeviceId?: string | null;
  Status?: string | null;
  Severity?: string | null;
  RaisedAt?: string | null;
}

/**
 * The device's alert an operator should open: Open before Acknowledged, then the most
 * severe, then the oldest. Null when it has none in the queue.
 */
export function openAlertOf<A extends DeviceAlert>(alerts: Iterable<A>, tenantCode: string, deviceId: string): A | null {
  let best: A | null = null;
  const rank = (a: A): [number, number, number] => [
    a.Status === 'Open' ? 0 : 1,
    -Number(a.Severity ?? 0),
    a.RaisedAt ? Date.parse(a.RaisedAt) : Number.POSITIVE_INFINITY,
  ];
  for (const a of alerts) {
    if (a.DeviceId !== deviceId || (a.TenantCode ?? '') !== tenantCode) continue;
    if (a.Status !== 'Open' && a.Status !== 'Acknowledged') continue;
    if (!best) {
      best = a;
      continue;
    }
    const [x, y] = [rank(a), rank(best)];
    if (x[0] < y[0] || (x[0] === y[0] && (x[1] < y[1] || (x[1] === y[1] && x[2] < y[2])))) best = a;
  }
  return best;
}

/** Garmin takes satellite texts of 1 to 160 characters (`garmin_mt::MAX_TEXT_CHARS`). */
export const SATELLITE_TEXT_LIMIT = 160;

/**
 * How a text reaches the device, as far as its record tells:
 * - `satellite`: an inReach with an IMEI, through Garmin's IPC Inbound (160 characters);
 * - `app`: a phone app (OsmAnd / Traccar Client) that collects it with its next report;
 * - `noImei`: an inReach without the IMEI Garmin addresses it by;
 * - `none`: no channel the platform knows carries texts to it (it waits, Queued, for a
 *   gateway of its own to collect it).
 */
export type TextChannel = 'satellite' | 'app' | 'noImei' | 'none';

export function textChannel(d: Pick<DeviceRecord, 'DeviceType' | 'IridiumImei'>): TextChannel {
  const type = (d.DeviceType ?? '').toLowerCase();
  if (type.startsWith('inreach')) return d.IridiumImei?.trim() ? 'satellite' : 'noImei';
  if (/osmand|traccar|phone|app/.test(type)) return 'app';
  return 'none';
}

/** Characters as Garmin counts them (code points, not UTF-16 units). */
export function textLength(text: string): number {
  return [...text].length;
}

import { deviceState, type DeviceState } from './positions';

export { deviceState, type DeviceState };
export const DEVICE_STATES: readonly DeviceState[] = ['emergency', 'reporting', 'silent', 'unknown'];

/** When the next check-in is due (ms), or null without a schedule or a first message. */
export function checkInDue(d: Device): number | null {
  if (!d.CheckInIntervalMinutes || !d.LastMessageTime) return null;
  const last = Date.parse(d.LastMessageTime);
  return Number.isNaN(last) ? null : last + d.CheckInIntervalMinutes * 60_000;
}

export interface DeviceFilter {
  /** Part of the name, the id, the IMEI or the assigned person's name (any case). */
  text: string;
  /** `tenant/groupId`, or '' for any group. */
  group: string;
  /** A `DeviceType`, or '' for any. */
  type: string;
  state: DeviceState | '';
}

export const NO_FILTER: DeviceFilter = { text: '', group: '', type: '', state: '' };

/** A listed device with what filtering and sorting read, computed once per change. */
export interface Row {
  key: string;
  device: DeviceRecord;
  /** Name, id, IMEI and the assigned person (name, login) in lower case, for the search. */
  haystack: string;
  /** Last report (ms), or -Infinity when the device never reported. */
  reportedAt: number;
  group: string;
}

export function deviceKey(tenantCode: string, deviceId: string): string {
  return `${tenantCode}/${deviceId}`;
}

export function toRow(d: DeviceRecord, fallbackTenant: string): Row {
  const tenant = d.TenantCode ?? fallbackTenant;
  const reported = d.LastMessageTime ? Date.parse(d.LastMessageTime) : Number.NaN;
  const device = d.TenantCode ? d : { ...d, TenantCode: tenant };
  return {
    key: deviceKey(tenant, d.DeviceId),
    device,
    haystack: [d.FriendlyName, d.DeviceId, d.IridiumImei, userLabel(d), d.AssignedUser?.Username].filter(Boolean).join('\n').toLowerCase(),
    reportedAt: Number.isNaN(reported) ? Number.NEGATIVE_INFINITY : reported,
    group: d.GroupId ? `${tenant}/${d.GroupId}` : '',
  };
}

export function matches(row: Row, filter: DeviceFilter, now: number): boolean {
  const text = filter.text.trim().toLowerCase();
  if (text && !row.haystack.includes(text)) return false;
  if (filter.group && row.group !== filter.group) return false;
  if (filter.type && row.device.DeviceType !== filter.type) return false;
  if (filter.state && deviceState(row.device, now) !== filter.state) return false;
  return true;
}

/** Last report, newest first; never reported last; then by name and key (a stable order). */
export function compareRows(a: Row, b: Row): number {
  if (a.reportedAt !== b.reportedAt) return a.reportedAt > b.reportedAt ? -1 : 1;
  const an = a.device.FriendlyName || a.device.DeviceId;
  const bn = b.device.FriendlyName || b.device.DeviceId;
  if (an !== bn) return an < bn ? -1 : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** Where `row` goes in `sorted` (binary search). */
function insertionPoint(sorted: Row[], row: Row): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareRows(sorted[mid] as Row, row) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Above this many changes at once, the view is rebuilt rather than patched. */
const PATCH_LIMIT = 256;

/**
 * Every device in scope, kept sorted, and the filtered view of them. `update` patches
 * both for a few changed devices (remove, then insert in place) instead of sorting 10,000
 * rows again for each stream event; a new filter only scans the sorted rows.
 */
export class DeviceView {
  private readonly rows = new Map<string, Row>();
  private sorted: Row[] = [];
  private view: Row[] = [];
  private filter: DeviceFilter = NO_FILTER;

  constructor(private readonly fallbackTenant: string) {}

  get size(): number {
    return this.rows.size;
  }

  /** The filtered devices, in order. */
  get visible(): readonly Row[] {
    return this.view;
  }

  all(): IterableIterator<Row> {
    return this.rows.values();
  }

  get(key: string): Row | undefined {
    return this.rows.get(key);
  }

  setFilter(filter: DeviceFilter, now: number): void {
    this.filter = { ...filter };
    this.rebuild(now);
  }

  /** Replaces every device (a fresh read). */
  replace(devices: Iterable<DeviceRecord>, now: number): void {
    this.rows.clear();
    for (const d of devices) {
      const row = toRow(d, this.fallbackTenant);
      this.rows.set(row.key, row);
    }
    this.sorted = [...this.rows.values()].sort(compareRows);
    this.rebuild(now);
  }

  /** Adds or changes devices; the view stays filtered and sorted. */
  update(devices: Iterable<DeviceRecord>, now: number): void {
    const changed = new Map<string, Row>();
    for (const d of devices) {
      const row = toRow(d, this.fallbackTenant);
      this.rows.set(row.key, row);
      changed.set(row.key, row);
    }
    if (changed.size === 0) return;
    if (changed.size > PATCH_LIMIT) {
      this.sorted = [...this.rows.values()].sort(compareRows);
      this.rebuild(now);
      return;
    }
    this.sorted = this.sorted.filter((r) => !changed.has(r.key));
    this.view = this.view.filter((r) => !changed.has(r.key));
    for (const row of changed.values()) {
      this.sorted.splice(insertionPoint(this.sorted, row), 0, row);
      if (matches(row, this.filter, now)) this.view.splice(insertionPoint(this.view, row), 0, row);
    }
  }

  /** Filters again (also when time alone changes a device's state). */
  rebuild(now: number): void {
    this.view = this.sorted.filter((row) => matches(row, this.filter, now));
  }
}

/** The slice of `total` rows that page `page` (from 0) shows, clamped to what exists. */
export function pageBounds(total: number, page: number, size: number): { page: number; start: number; end: number; pages: number } {
  const pages = Math.max(1, Math.ceil(total / size));
  const clamped = Math.min(Math.max(0, page), pages - 1);
  const start = clamped * size;
  return { page: clamped, start, end: Math.min(total, start + size), pages };
}
