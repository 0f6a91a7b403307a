import { describe, expect, it } from 'vitest';
import { deviceState, trackPoints } from '../src/positions';

const now = Date.parse('2026-11-25T12:00:00Z');
const at = { Lat: 51.5, Lon: -0.12 };

describe('deviceState', () => {
  it('says emergency first, whatever else is true', () => {
    expect(deviceState({ DeviceId: 'a', EmergencyState: 'Active' }, now)).toBe('emergency');
    expect(deviceState({ DeviceId: 'a', EmergencyState: 'Active', LastPosition: at, CheckInIntervalMinutes: 1, LastMessageTime: '2026-11-24T00:00:00Z' }, now)).toBe('emergency');
  });

  it('says unknown without a position, and reporting without a check-in interval', () => {
    expect(deviceState({ DeviceId: 'a' }, now)).toBe('unknown');
    expect(deviceState({ DeviceId: 'a', LastPosition: at, EmergencyState: 'None', LastMessageTime: '2026-01-01T00:00:00Z' }, now)).toBe('reporting');
  });

  it('says silent only past the check-in interval', () => {
    const device = { DeviceId: 'a', LastPosition: at, CheckInIntervalMinutes: 30 };
    expect(deviceState({ ...device, LastMessageTime: '2026-11-25T11:31:00Z' }, now)).toBe('reporting');
    expect(deviceState({ ...device, LastMessageTime: '2026-11-25T11:30:00Z' }, now)).toBe('reporting');
    expect(deviceState({ ...device, LastMessageTime: '2026-11-25T11:29:59Z' }, now)).toBe('silent');
  });
});

describe('trackPoints', () => {
  it('orders positions by time, GPS time first, and leaves out messages without one', () => {
    const points = trackPoints([
      { SentFromDevice: '2026-11-25T12:10:00Z', Position: { Latitude: 2, Longitude: 2 } },
      { SentFromDevice: '2026-11-25T12:20:00Z', Position: { Latitude: 1, Longitude: 1, GpsTimestamp: '2026-11-25T11:50:00Z' } },
      { SentFromDevice: '2026-11-25T12:05:00Z' },
      { SentFromDevice: '2026-11-25T12:06:00Z', Position: { Latitude: null, Longitude: 3 } },
      { ReceivedAtServer: '2026-11-25T12:15:00Z', Position: { Latitude: 0, Longitude: 0 } },
      { SentFromDevice: 'not a time', Position: { Latitude: 4, Longitude: 4 } },
    ]);
    expect(points).toEqual([
      { lat: 1, lon: 1, at: '2026-11-25T11:50:00Z' },
      { lat: 2, lon: 2, at: '2026-11-25T12:10:00Z' },
      { lat: 0, lon: 0, at: '2026-11-25T12:15:00Z' },
    ]);
  });
});
