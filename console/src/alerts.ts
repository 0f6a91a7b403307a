// The alert queue's own logic, apart from the DOM: what an alert is, which ones the queue
// holds, their order, and how a record from the stream is merged with the one held.

/** The notification's severity: "0" None, "1" Warning, "2" High. */
export type Severity = '0' | '1' | '2' | string;
export type Status = 'Open' | 'Acknowledged' | 'Resolved' | string;

export interface Alert {
  AlertId: string;
  TenantCode?: string | null;
  DeviceId?: string | null;
  NotificationId?: string | null;
  NotificationName?: string | null;
  Severity?: Severity | null;
  Status?: Status | null;
  RaisedAt?: string | null;
  LastMatchAt?: string | null;
  MatchCount?: number;
  Latitude?: number | null;
  Longitude?: number | null;
  Geofences?: string[] | null;
  MessageId?: string | null;
  /** The raising message's `MessageType` and its text (`Message`); null without one. */
  MessageType?: string | null;
  MessageText?: string | null;
  Late?: boolean;
  AcknowledgedBy?: string | null;
  AcknowledgedAt?: string | null;
  ResolvedBy?: string | null;
  ResolvedAt?: string | null;
  Resolution?: string | null;
  Outcome?: string | null;
  NoteCount?: number;
  EscalationLevel?: number;
  ETag?: string | null;
}

const SEVERITY_RANK: Record<string, number> = { '2': 0, '1': 1, '0': 2 };
const SEVERITY_NAME: Record<string, 'High' | 'Warning' | 'None'> = { '2': 'High', '1': 'Warning', '0': 'None' };

/** `High`, `Warning` or `None` (the catalogue's `severity.*` keys and the CSS classes). */
export function severityName(s: Severity | null | undefined): 'High' | 'Warning' | 'None' {
  return SEVERITY_NAME[s ?? ''] ?? 'None';
}
const STATUS_RANK: Record<string, number> = { Open: 0, Acknowledged: 1, Resolved: 2 };

/** An alert's identity across tenants (ids are per installation, but the key is cheap). */
export function alertKey(a: Pick<Alert, 'AlertId' | 'TenantCode'>): string {
  return `${a.TenantCode ?? ''}/${a.AlertId}`;
}

/** The queue holds Open and Acknowledged alerts. */
export function inQueue(a: Alert): boolean {
  return a.Status === 'Open' || a.Status === 'Acknowledged';
}

export function severityRank(s: Severity | null | undefined): number {
  return SEVERITY_RANK[s ?? ''] ?? 3;
}

/** The queue's order within a severity and status: oldest first (the default) or newest. */
export type QueueOrder = 'oldest' | 'newest';

/**
 * Severity first (High, Warning, None, other), then Open before Acknowledged (nobody has
 * it yet), then the oldest first (or the newest, `order`); ties by id.
 */
export function compareAlerts(a: Alert, b: Alert, order: QueueOrder = 'oldest'): number {
  const bySeverity = severityRank(a.Severity) - severityRank(b.Severity);
  if (bySeverity !== 0) return bySeverity;
  const byStatus = (STATUS_RANK[a.Status ?? ''] ?? 3) - (STATUS_RANK[b.Status ?? ''] ?? 3);
  if (byStatus !== 0) return byStatus;
  const ta = a.RaisedAt ? Date.parse(a.RaisedAt) : Number.POSITIVE_INFINITY;
  const tb = b.RaisedAt ? Date.parse(b.RaisedAt) : Number.POSITIVE_INFINITY;
  if (ta !== tb) return (ta < tb ? -1 : 1) * (order === 'newest' ? -1 : 1);
  return Number(a.AlertId) - Number(b.AlertId) || a.AlertId.localeCompare(b.AlertId);
}

/**
 * How far an alert's record has come: its status only moves forward, and its counts only
 * grow. A record read from the list may be older or newer than one from the stream; the
 * further one wins, so a late event never takes an alert back.
 */
function progress(a: Alert): number[] {
  return [
    STATUS_RANK[a.Status ?? ''] ?? 0,
    a.EscalationLevel ?? 0,
    a.MatchCount ?? 0,
    a.NoteCount ?? 0,
    a.LastMatchAt ? Date.parse(a.LastMatchAt) : 0,
  ];
}

/** Whether `incoming` is at least as far along as `held` (then it replaces it). */
export function isNewer(incoming: Alert, held: Alert): boolean {
  const x = progress(incoming);
  const y = progress(held);
  for (let i = 0; i < x.length; i++) {
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) > (y[i] ?? 0);
  }
  return true;
}

/** Whether two records of one alert are the same version (its ETag, else every field). */
function sameVersion(a: Alert, b: Alert): boolean {
  if (a.ETag && b.ETag) return a.ETag === b.ETag;
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The alerts known to this page, kept by key. */
export class AlertStore {
  private readonly byKey = new Map<string, Alert>();

  /** Merges one record; answers whether it was new to the store (never seen before). */
  upsert(alert: Alert): { added: boolean; changed: boolean } {
    const key = alertKey(alert);
    const held = this.byKey.get(key);
    if (!held) {
      this.byKey.set(key, alert);
      return { added: true, changed: true };
    }
    // A re-read of the same version is no change: pages keep what they drew from the held
    // record (a queue row, and the focus in it).
    if (!isNewer(alert, held) || sameVersion(alert, held)) return { added: false, changed: false };
    this.byKey.set(key, alert);
    return { added: false, changed: true };
  }

  /**
   * A fresh read of the queue (at load or after a gap): every record merged, and held
   * queue alerts that the read no longer lists are taken as having left it — unless the
   * held record is further along than anything the read could know (not the case: the
   * read is newer than anything held before it started).
   */
  replaceQueue(read: Alert[]): void {
    const listed = new Set(read.map(alertKey));
    for (const [key, held] of this.byKey) {
      if (inQueue(held) && !listed.has(key)) this.byKey.delete(key);
    }
    for (const a of read) this.upsert(a);
  }

  get(key: string): Alert | undefined {
    return this.byKey.get(key);
  }

  /** The queue, in order. */
  queue(order: QueueOrder = 'oldest'): Alert[] {
    return [...this.byKey.values()].filter(inQueue).sort((a, b) => compareAlerts(a, b, order));
  }

  /** The open alert of a device (its newest, by raised time), if the queue holds one. */
  openAlertOf(tenantCode: string, deviceId: string): Alert | undefined {
    let found: Alert | undefined;
    for (const a of this.byKey.values()) {
      if (!inQueue(a) || a.DeviceId !== deviceId || (a.TenantCode ?? '') !== tenantCode) continue;
      if (!found || compareAlerts(a, found, 'newest') < 0) found = a;
    }
    return found;
  }
}

/** Whether a newly seen alert is announced (sound, title, banner). */
export function isAnnounced(a: Alert): boolean {
  return a.Status === 'Open' && (a.Severity === '2' || a.Severity === '1');
}

/** What may be done to an alert in its status: acknowledge only while Open, resolve until
 * it is resolved, a note always (a note after resolution records the follow-up). */
export interface Actions {
  acknowledge: boolean;
  resolve: boolean;
  note: boolean;
}

export function actionsFor(status: Status | null | undefined): Actions {
  return { acknowledge: status === 'Open', resolve: status === 'Open' || status === 'Acknowledged', note: true };
}

/** An action refused (409/412) because the alert had moved on: who moved it, and whether
 * it was the caller themself (a second click, another tab) — never "someone else". */
export interface Conflict {
  status: 'Acknowledged' | 'Resolved' | 'Open' | string;
  by: string | null;
  at: string | null;
  mine: boolean;
}

export function conflictOf(now: Alert, me: string | null | undefined): Conflict {
  const resolved = now.Status === 'Resolved';
  const by = (resolved ? now.ResolvedBy : now.AcknowledgedBy) ?? null;
  const at = (resolved ? now.ResolvedAt : now.AcknowledgedAt) ?? null;
  return { status: now.Status ?? '', by, at, mine: !!by && !!me && by === me };
}

/** The one-click log entries an operator records as notes (catalogue keys `duty.log.*`). */
export const LOG_ENTRIES = ['calledNoAnswer', 'calledOk', 'calledContact', 'calledServices', 'dispatched', 'messaged'] as const;
export type LogEntry = (typeof LOG_ENTRIES)[number];

/** A position as an OpenStreetMap link (the marker at it). */
export function mapsLink(lat: number, lon: number): string {
  const la = lat.toFixed(6);
  const lo = lon.toFixed(6);
  return `https://www.openstreetmap.org/?mlat=${la}&mlon=${lo}#map=16/${la}/${lo}`;
}

/** A phone number as a `tel:` link (spaces and punctuation dropped; null when none is left). */
export function telLink(number: string | null | undefined): string | null {
  const digits = (number ?? '').replace(/[^\d+]/g, '');
  return /\d/.test(digits) ? `tel:${digits}` : null;
}

/** An address that reads as an e-mail, as a `mailto:` link (else null). */
export function mailLink(address: string | null | undefined): string | null {
  const a = (address ?? '').trim();
  return /^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/.test(a) ? `mailto:${encodeURIComponent(a).replace('%40', '@')}` : null;
}

/** How late a message arrived: received minus sent, in ms (null when either is unknown). */
export function lateness(sent: string | null | undefined, received: string | null | undefined): number | null {
  if (!sent || !received) return null;
  const d = Date.parse(received) - Date.parse(sent);
  return Number.isNaN(d) ? null : Math.max(0, d);
}
