// Where devices are and what state they are in, apart from the map that draws them.
import type { Device } from './live';

export type DeviceState = 'emergency' | 'reporting' | 'silent' | 'unknown';

/** Emergency; silent past its check-in interval; reporting; or no position at all. */
export function deviceState(
  d: Pick<Device, 'DeviceId' | 'EmergencyState' | 'LastPosition' | 'CheckInIntervalMinutes' | 'LastMessageTime'>,
  now: number,
): DeviceState {
  if (d.EmergencyState === 'Active') return 'emergency';
  if (!d.LastPosition) return 'unknown';
  if (d.CheckInIntervalMinutes && d.LastMessageTime) {
    const silentFor = now - Date.parse(d.LastMessageTime);
    if (silentFor > d.CheckInIntervalMinutes * 60_000) return 'silent';
  }
  return 'reporting';
}

export interface TrackPoint {
  lat: number;
  lon: number;
  /** ISO time of the position (GPS time, else the message's). */
  at: string;
}

export interface MoMessage {
  SentFromDevice?: string | null;
  ReceivedAtServer?: string | null;
  Position?: { Latitude?: number | null; Longitude?: number | null; GpsTimestamp?: string | null } | null;
}

/** How far either side of the moment the track reaches. */
export const TRACK_WINDOW_MS = 60 * 60_000;

/** The positions of a list of messages, oldest first (messages without one left out). */
export function trackPoints(messages: MoMessage[]): TrackPoint[] {
  const points: TrackPoint[] = [];
  for (const m of messages) {
    const lat = m.Position?.Latitude;
    const lon = m.Position?.Longitude;
    const at = m.Position?.GpsTimestamp ?? m.SentFromDevice ?? m.ReceivedAtServer;
    if (lat == null || lon == null || !at || Number.isNaN(Date.parse(at))) continue;
    points.push({ lat, lon, at });
  }
  return points.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
}

