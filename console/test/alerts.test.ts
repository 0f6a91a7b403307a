import { describe, expect, it } from 'vitest';
import {
  actionsFor,
  AlertStore,
  compareAlerts,
  conflictOf,
  isAnnounced,
  isNewer,
  lateness,
  mailLink,
  mapsLink,
  telLink,
  type Alert,
} from '../src/alerts';

const alert = (id: string, severity: string, raisedAt: string, extra: Partial<Alert> = {}): Alert => ({
  AlertId: id,
  TenantCode: 'acme',
  Severity: severity,
  Status: 'Open',
  RaisedAt: raisedAt,
  MatchCount: 1,
  NoteCount: 0,
  EscalationLevel: 0,
  ...extra,
});

describe('alert ordering', () => {
  it('is by severity (High, Warning, None), then oldest first, then id', () => {
    const list = [
      alert('1', '0', '2026-01-01T10:00:00Z'),
      alert('2', '1', '2026-01-01T10:05:00Z'),
      alert('3', '2', '2026-01-01T10:10:00Z'),
      alert('4', '2', '2026-01-01T09:00:00Z'),
      alert('5', '1', '2026-01-01T10:05:00Z'),
    ];
    expect(list.sort(compareAlerts).map((a) => a.AlertId)).toEqual(['4', '3', '2', '5', '1']);
  });

  it('puts an Open alert above an Acknowledged one of the same severity, whatever their ages', () => {
    const list = [
      alert('1', '2', '2026-01-01T08:00:00Z', { Status: 'Acknowledged' }),
      alert('2', '2', '2026-01-01T11:00:00Z'),
      alert('3', '1', '2026-01-01T07:00:00Z'),
      alert('4', '2', '2026-01-01T09:00:00Z'),
    ];
    // High: the two Open ones (oldest first), then the acknowledged one; then Warning.
    expect([...list].sort((a, b) => compareAlerts(a, b)).map((a) => a.AlertId)).toEqual(['4', '2', '1', '3']);
  });

  it('can put the newest first within a severity and status (never above a higher severity)', () => {
    const store = new AlertStore();
    store.upsert(alert('1', '2', '2026-01-01T08:00:00Z'));
    store.upsert(alert('2', '2', '2026-01-01T09:00:00Z'));
    store.upsert(alert('3', '2', '2026-01-01T10:00:00Z', { Status: 'Acknowledged' }));
    store.upsert(alert('4', '1', '2026-01-01T12:00:00Z'));
    expect(store.queue('newest').map((a) => a.AlertId)).toEqual(['2', '1', '3', '4']);
    expect(store.queue().map((a) => a.AlertId)).toEqual(['1', '2', '3', '4']);
  });

  it("finds a device's open alert (its newest), never another tenant's or a resolved one", () => {
    const store = new AlertStore();
    store.upsert(alert('1', '2', '2026-01-01T08:00:00Z', { DeviceId: 'd1', Status: 'Acknowledged' }));
    store.upsert(alert('2', '1', '2026-01-01T09:00:00Z', { DeviceId: 'd1' }));
    store.upsert(alert('3', '2', '2026-01-01T10:00:00Z', { DeviceId: 'd1', TenantCode: 'other' }));
    store.upsert(alert('4', '2', '2026-01-01T11:00:00Z', { DeviceId: 'd2', Status: 'Resolved' }));
    expect(store.openAlertOf('acme', 'd1')?.AlertId).toBe('1');
    expect(store.openAlertOf('other', 'd1')?.AlertId).toBe('3');
    expect(store.openAlertOf('acme', 'd2')).toBeUndefined();
  });

  it('announces new Open High and Warning alerts only', () => {
    expect(isAnnounced(alert('1', '2', 'x'))).toBe(true);
    expect(isAnnounced(alert('1', '1', 'x'))).toBe(true);
    expect(isAnnounced(alert('1', '0', 'x'))).toBe(false);
    expect(isAnnounced(alert('1', '2', 'x', { Status: 'Acknowledged' }))).toBe(false);
  });
});

describe('alert store', () => {
  it('never takes an alert back: a late Open record loses to an Acknowledged one', () => {
    const acked = alert('7', '2', '2026-01-01T10:00:00Z', { Status: 'Acknowledged', AcknowledgedBy: 'ann' });
    const open = alert('7', '2', '2026-01-01T10:00:00Z');
    expect(isNewer(open, acked)).toBe(false);
    const store = new AlertStore();
    store.upsert(acked);
    expect(store.upsert(open)).toEqual({ added: false, changed: false });
    expect(store.get('acme/7')?.Status).toBe('Acknowledged');
  });

  it('takes a further match, note or escalation of the same status', () => {
    const store = new AlertStore();
    store.upsert(alert('7', '2', 't'));
    expect(store.upsert(alert('7', '2', 't', { NoteCount: 1 })).changed).toBe(true);
    expect(store.upsert(alert('7', '2', 't', { EscalationLevel: 1, NoteCount: 1 })).changed).toBe(true);
  });

  it('keeps the held record when a re-read brings the same version', () => {
    const store = new AlertStore();
    const held = alert('7', '2', 't', { ETag: '"v1"' });
    store.upsert(held);
    expect(store.upsert(alert('7', '2', 't', { ETag: '"v1"' }))).toEqual({ added: false, changed: false });
    expect(store.get('acme/7')).toBe(held);
    expect(store.upsert(alert('7', '2', 't', { ETag: '"v2"' })).changed).toBe(true);
    const plain = alert('8', '1', 't');
    store.upsert(plain);
    expect(store.upsert(alert('8', '1', 't')).changed).toBe(false);
    expect(store.get('acme/8')).toBe(plain);
  });

  it('keeps Open and Acknowledged in the queue; Resolved leaves it', () => {
    const store = new AlertStore();
    store.upsert(alert('1', '2', '2026-01-01T10:00:00Z'));
    store.upsert(alert('2', '1', '2026-01-01T10:00:00Z', { Status: 'Acknowledged' }));
    store.upsert(alert('1', '2', '2026-01-01T10:00:00Z', { Status: 'Resolved' }));
    expect(store.queue().map((a) => a.AlertId)).toEqual(['2']);
  });

  it('a fresh read replaces the queue: what it no longer lists has left', () => {
    const store = new AlertStore();
    store.upsert(alert('1', '2', '2026-01-01T10:00:00Z'));
    store.upsert(alert('2', '2', '2026-01-01T10:01:00Z'));
    store.replaceQueue([alert('2', '2', '2026-01-01T10:01:00Z'), alert('3', '1', '2026-01-01T10:02:00Z')]);
    expect(store.queue().map((a) => a.AlertId)).toEqual(['2', '3']);
  });

  it('keeps tenants apart: the same id in two tenants is two alerts', () => {
    const store = new AlertStore();
    store.upsert(alert('1', '2', 't'));
    store.upsert({ ...alert('1', '2', 't'), TenantCode: 'other' });
    expect(store.queue()).toHaveLength(2);
  });
});

describe('what an alert offers, by its status', () => {
  it('acknowledge only while Open, resolve until resolved, a note always', () => {
    expect(actionsFor('Open')).toEqual({ acknowledge: true, resolve: true, note: true });
    expect(actionsFor('Acknowledged')).toEqual({ acknowledge: false, resolve: true, note: true });
    expect(actionsFor('Resolved')).toEqual({ acknowledge: false, resolve: false, note: true });
    // A status the console does not know offers no workflow step.
    expect(actionsFor('Archived')).toEqual({ acknowledge: false, resolve: false, note: true });
    expect(actionsFor(undefined)).toEqual({ acknowledge: false, resolve: false, note: true });
  });
});

describe('a refused action says who acted', () => {
  const acked = alert('7', '2', 't', { Status: 'Acknowledged', AcknowledgedBy: 'ann@x.org', AcknowledgedAt: '2026-01-01T10:01:00Z' });
  it('is the caller themself: theirs, with the time', () => {
    expect(conflictOf(acked, 'ann@x.org')).toEqual({ status: 'Acknowledged', by: 'ann@x.org', at: '2026-01-01T10:01:00Z', mine: true });
  });
  it('is someone else: named', () => {
    expect(conflictOf(acked, 'bob@x.org').mine).toBe(false);
    expect(conflictOf(acked, null).mine).toBe(false);
  });
  it('a resolved alert names who resolved it', () => {
    const resolved = { ...acked, Status: 'Resolved', ResolvedBy: 'bob@x.org', ResolvedAt: '2026-01-01T10:05:00Z' };
    expect(conflictOf(resolved, 'bob@x.org')).toEqual({ status: 'Resolved', by: 'bob@x.org', at: '2026-01-01T10:05:00Z', mine: true });
    expect(conflictOf(resolved, 'ann@x.org').mine).toBe(false);
  });
  it('nobody named is never "you"', () => {
    expect(conflictOf(alert('8', '2', 't', { Status: 'Acknowledged' }), 'ann@x.org')).toMatchObject({ by: null, mine: false });
  });
});

describe('links to call, write and look', () => {
  it('makes tel: links of numbers as people type them, none without digits', () => {
    expect(telLink('+44 20 7946-0000')).toBe('tel:+442079460000');
    expect(telLink('(555) 010 99')).toBe('tel:55501099');
    expect(telLink('call the depot')).toBeNull();
    expect(telLink('')).toBeNull();
    expect(telLink(null)).toBeNull();
    expect(telLink('javascript:alert(1)')).toBe('tel:1');
  });
  it('makes mailto: links of e-mail addresses only', () => {
    expect(mailLink(' ann@example.org ')).toBe('mailto:ann@example.org');
    expect(mailLink('ann+night@example.org')).toBe('mailto:ann%2Bnight@example.org');
    expect(mailLink('12 High Street, Leeds')).toBeNull();
    expect(mailLink('<b>@x.y')).toBeNull();
    expect(mailLink(undefined)).toBeNull();
  });
  it('opens a position in OpenStreetMap', () => {
    expect(mapsLink(51.5, -0.125)).toBe('https://www.openstreetmap.org/?mlat=51.500000&mlon=-0.125000#map=16/51.500000/-0.125000');
  });
  it('says how late a message came (never negative, unknown without both times)', () => {
    expect(lateness('2026-01-01T10:00:00Z', '2026-01-01T10:42:00Z')).toBe(42 * 60_000);
    expect(lateness('2026-01-01T10:00:00Z', '2026-01-01T09:59:00Z')).toBe(0);
    expect(lateness(null, '2026-01-01T10:00:00Z')).toBeNull();
    expect(lateness('nonsense', '2026-01-01T10:00:00Z')).toBeNull();
  });
});
