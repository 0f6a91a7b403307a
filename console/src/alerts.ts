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
  MessageId?: string | null;
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

/** Severity first (High, Warning, None, other), then the oldest first; ties by id. */
export function compareAlerts(a: Alert, b: Alert): number {
  const bySeverity = severityRank(a.Severity) - severityRank(b.Severity);
  if (bySeverity !== 0) return bySeverity;
  const ta = a.RaisedAt ? Date.parse(a.RaisedAt) : Number.POSITIVE_INFINITY;
  const tb = b.RaisedAt ? Date.parse(b.RaisedAt) : Number.POSITIVE_INFINITY;
  if (ta !== tb) return ta < tb ? -1 : 1;
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
  queue(): Alert[] {
    return [...this.byKey.values()].filter(inQueue).sort(compareAlerts);
  }
}

/** Whether a newly seen alert is announced (sound, title, banner). */
export function isAnnounced(a: Alert): boolean {
  return a.Status === 'Open' && (a.Severity === '2' || a.Severity === '1');
}
