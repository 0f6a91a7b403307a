import { describe, expect, it } from 'vitest';
import {
  DeviceView, SATELLITE_TEXT_LIMIT, compareRows, deviceState, matches, mergeDevice, NO_FILTER, openAlertOf, pageBounds, textChannel, textLength, toRow,
  userLabel, type DeviceRecord,
} from '../src/devices';

const now = Date.parse('2026-03-01T12:00:00Z');
const at = (minutesAgo: number): string => new Date(now - minutesAgo * 60_000).toISOString();
const position = { Lat: 51.5, Lon: -0.1 };

function device(id: string, extra: Partial<DeviceRecord> = {}): DeviceRecord {
  return { DeviceId: id, TenantCode: '1001', DeviceType: 'InReach', ...extra };
}

describe('device state', () => {
  it('emergency first, then no position, silent past its check-in, else reporting', () => {
    expect(deviceState(device('a', { EmergencyState: 'Active' }), now)).toBe('emergency');
    expect(deviceState(device('b'), now)).toBe('unknown');
    expect(deviceState(device('c', { LastPosition: position, LastMessageTime: at(90), CheckInIntervalMinutes: 60 }), now)).toBe('silent');
    expect(deviceState(device('d', { LastPosition: position, LastMessageTime: at(30), CheckInIntervalMinutes: 60 }), now)).toBe('reporting');
    expect(deviceState(device('e', { LastPosition: position, LastMessageTime: at(9000) }), now)).toBe('reporting');
  });
});

describe('device filters', () => {
  const van = toRow(device('300234010753370', { FriendlyName: 'Van Nord', IridiumImei: '300234010999999', GroupId: '7' }), '1000');
  it('searches name, id and IMEI in any case', () => {
    expect(matches(van, { ...NO_FILTER, text: 'van n' }, now)).toBe(true);
    expect(matches(van, { ...NO_FILTER, text: '0753370' }, now)).toBe(true);
    expect(matches(van, { ...NO_FILTER, text: '999999' }, now)).toBe(true);
    expect(matches(van, { ...NO_FILTER, text: 'truck' }, now)).toBe(false);
    expect(matches(van, { ...NO_FILTER, text: '   ' }, now)).toBe(true);
  });
  it('filters by group (of its tenant), type and state together', () => {
    expect(matches(van, { ...NO_FILTER, group: '1001/7' }, now)).toBe(true);
    expect(matches(van, { ...NO_FILTER, group: '1002/7' }, now)).toBe(false);
    expect(matches(van, { ...NO_FILTER, type: 'InReach' }, now)).toBe(true);
    expect(matches(van, { ...NO_FILTER, type: 'Spot' }, now)).toBe(false);
    expect(matches(van, { ...NO_FILTER, state: 'unknown', type: 'InReach' }, now)).toBe(true);
    expect(matches(van, { ...NO_FILTER, state: 'reporting' }, now)).toBe(false);
  });
});

describe('device order and view', () => {
  it('sorts by last report, newest first, never-reported last, then by name', () => {
    const rows = [
      toRow(device('never-b', { FriendlyName: 'B' }), '1000'),
      toRow(device('old', { LastMessageTime: at(60) }), '1000'),
      toRow(device('never-a', { FriendlyName: 'A' }), '1000'),
      toRow(device('new', { LastMessageTime: at(1) }), '1000'),
    ];
    expect(rows.sort(compareRows).map((r) => r.device.DeviceId)).toEqual(['new', 'old', 'never-a', 'never-b']);
  });

  it('keeps the view filtered and sorted as updates arrive', () => {
    const view = new DeviceView('1000');
    view.replace(
      Array.from({ length: 1000 }, (_, i) => device(`d${i}`, { LastMessageTime: at(1000 - i), LastPosition: position })),
      now,
    );
    expect(view.visible[0]?.device.DeviceId).toBe('d999');
    // A report from an old device moves it to the top; an emergency leaves a state filter.
    view.setFilter({ ...NO_FILTER, state: 'reporting' }, now);
    view.update([device('d0', { LastMessageTime: at(0), LastPosition: position }), device('d500', { EmergencyState: 'Active', LastMessageTime: at(0), LastPosition: position })], now);
    expect(view.visible[0]?.device.DeviceId).toBe('d0');
    expect(view.visible.some((r) => r.device.DeviceId === 'd500')).toBe(false);
    expect(view.visible).toHaveLength(999);
    // A new device joins in place; the same key again replaces, never duplicates.
    view.update([device('fresh', { LastMessageTime: at(0.5), LastPosition: position })], now);
    view.update([device('fresh', { LastMessageTime: at(0.5), LastPosition: position, FriendlyName: 'Fresh' })], now);
    expect(view.visible.map((r) => r.device.DeviceId).slice(0, 2)).toEqual(['d0', 'fresh']);
    expect(view.size).toBe(1001);
    // The patched view is what filtering and sorting everything again gives, before and
    // after the filter changes.
    const fresh = (filter = NO_FILTER): string[] =>
      [...view.all()].filter((r) => matches(r, filter, now)).sort(compareRows).map((r) => r.key);
    expect(view.visible.map((r) => r.key)).toEqual(fresh({ ...NO_FILTER, state: 'reporting' }));
    view.setFilter(NO_FILTER, now);
    expect(view.visible.map((r) => r.key)).toEqual(fresh());
    expect(view.visible[0]?.device.DeviceId).toBe('d0');
    expect(view.visible.map((r) => r.device.DeviceId).slice(1, 3).sort()).toEqual(['d500', 'fresh']);
  });

  it('tells devices of two tenants with the same id apart', () => {
    const view = new DeviceView('1000');
    view.replace([device('x', { TenantCode: '1001' }), device('x', { TenantCode: '1002' }), { DeviceId: 'x', DeviceType: 'InReach' }], now);
    expect(view.size).toBe(3);
    expect([...view.all()].map((r) => r.key).sort()).toEqual(['1000/x', '1001/x', '1002/x']);
  });

  it('pages are clamped to what exists', () => {
    expect(pageBounds(0, 3, 50)).toEqual({ page: 0, start: 0, end: 0, pages: 1 });
    expect(pageBounds(120, 2, 50)).toEqual({ page: 2, start: 100, end: 120, pages: 3 });
    expect(pageBounds(120, 9, 50)).toEqual({ page: 2, start: 100, end: 120, pages: 3 });
    expect(pageBounds(120, -1, 50)).toEqual({ page: 0, start: 0, end: 50, pages: 3 });
  });
});

describe('device list columns (issue 43)', () => {
  const jane = { UserId: '4', TenantCode: '1001', Username: 'jane@example.com', FirstName: 'Jane', LastName: 'Doe' };

  it('names the assigned person: first and last name, else the login, else nothing', () => {
    expect(userLabel(device('a', { UserId: '4', AssignedUser: jane }))).toBe('Jane Doe');
    expect(userLabel(device('b', { UserId: '4', AssignedUser: { ...jane, FirstName: ' ', LastName: null } }))).toBe('jane@example.com');
    expect(userLabel(device('c'))).toBe('');
    expect(userLabel(device('d', { UserId: '9', AssignedUser: null }))).toBe('');
  });

  it('finds a device by its person, and keeps the person through a stream update of the same user', () => {
    const row = toRow(device('van-1', { UserId: '4', AssignedUser: jane }), '1000');
    expect(matches(row, { ...NO_FILTER, text: 'jane d' }, now)).toBe(true);
    expect(matches(row, { ...NO_FILTER, text: 'JANE@example' }, now)).toBe(true);
    const held = device('van-1', { UserId: '4', AssignedUser: jane });
    const streamed = device('van-1', { UserId: '4', AssignedUser: null, BatteryPercentage: 40 });
    expect(mergeDevice(held, streamed)).toEqual({ ...streamed, AssignedUser: jane });
    // Given to someone else: the old person is not shown beside the new id.
    expect(mergeDevice(held, { ...streamed, UserId: '5' }).AssignedUser).toBeNull();
    expect(mergeDevice(undefined, streamed)).toBe(streamed);
  });

  it("links the device's alert: Open before Acknowledged, then the most severe, then the oldest; never another tenant's", () => {
    const alerts = [
      { AlertId: '1', TenantCode: '1001', DeviceId: 'van-1', Status: 'Acknowledged', Severity: '2', RaisedAt: at(50) },
      { AlertId: '2', TenantCode: '1001', DeviceId: 'van-1', Status: 'Open', Severity: '1', RaisedAt: at(40) },
      { AlertId: '3', TenantCode: '1001', DeviceId: 'van-1', Status: 'Open', Severity: '2', RaisedAt: at(10) },
      { AlertId: '4', TenantCode: '1001', DeviceId: 'van-1', Status: 'Open', Severity: '2', RaisedAt: at(20) },
      { AlertId: '5', TenantCode: '1002', DeviceId: 'van-1', Status: 'Open', Severity: '2', RaisedAt: at(90) },
      { AlertId: '6', TenantCode: '1001', DeviceId: 'van-1', Status: 'Resolved', Severity: '2', RaisedAt: at(99) },
    ];
    expect(openAlertOf(alerts, '1001', 'van-1')?.AlertId).toBe('4');
    expect(openAlertOf(alerts.slice(0, 1), '1001', 'van-1')?.AlertId).toBe('1');
    expect(openAlertOf(alerts, '1001', 'van-2')).toBeNull();
    expect(openAlertOf(alerts.slice(5), '1001', 'van-1')).toBeNull();
  });

  it('says whether a text can reach the device, and counts characters as Garmin does', () => {
    expect(textChannel({ DeviceType: 'InReachMini', IridiumImei: '300234010753370' })).toBe('satellite');
    expect(textChannel({ DeviceType: 'inreach', IridiumImei: ' ' })).toBe('noImei');
    expect(textChannel({ DeviceType: 'OsmAnd' })).toBe('app');
    expect(textChannel({ DeviceType: 'Spot' })).toBe('none');
    expect(textChannel({ DeviceType: null })).toBe('none');
    expect(SATELLITE_TEXT_LIMIT).toBe(160);
    expect(textLength('Ça va 👍')).toBe(7);
  });
});
