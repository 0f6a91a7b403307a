// The device list's own logic, without the DOM: a device's state, the filters, the order
// (last report, newest first) and a view that stays sorted while stream updates arrive.
// Everything here works in memory on what one paged read of the scope returned, so a
// keystroke or a burst of updates never waits for the server.
import type { Device } from './live';

/** A device as the device screens read it (the shared `Device` plus what they show). */
export interface DeviceRecord extends Device {
  IridiumImei?: string | null;
  Status?: string | null;
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
  /** Part of the name, the id or the IMEI (any case). */
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
  /** Name, id and IMEI in lower case, for the search. */
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
    haystack: [d.FriendlyName, d.DeviceId, d.IridiumImei].filter(Boolean).join('\n').toLowerCase(),
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
