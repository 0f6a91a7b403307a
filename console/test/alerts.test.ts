import { describe, expect, it } from 'vitest';
import { AlertStore, compareAlerts, isAnnounced, isNewer, type Alert } from '../src/alerts';

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
