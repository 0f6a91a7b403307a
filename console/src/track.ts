// A device's track around a moment: its MO messages' positions in a window, drawn as a
// line with a dot per position (each dot says when it was there).
import L from 'leaflet';
import { api, v2 } from './api';
import { h } from './dom';
import { formatDateTime } from './format';
import { t } from './i18n';
import { TRACK_WINDOW_MS, trackPoints, type MoMessage, type TrackPoint } from './positions';

export type { TrackPoint };

/** The device's positions within `TRACK_WINDOW_MS` of `atMs`. */
export async function trackAround(tenantCode: string, deviceId: string, atMs: number): Promise<TrackPoint[]> {
  const from = new Date(atMs - TRACK_WINDOW_MS).toISOString();
  const to = new Date(atMs + TRACK_WINDOW_MS).toISOString();
  const query = new URLSearchParams({ fromDate: from, toDate: to, pageSize: '1000' });
  const messages = await api.all<MoMessage>(`${v2(tenantCode, 'devices', deviceId, 'momessages')}?${query}`);
  return trackPoints(messages);
}

/** The track on a map; `add` extends it with a newer position. */
export class Track {
  readonly points: TrackPoint[];
  private readonly line: L.Polyline;
  private readonly dots = L.layerGroup();

  constructor(map: L.Map, points: TrackPoint[], also?: L.LatLng) {
    this.points = [...points];
    this.line = L.polyline(
      points.map((p) => [p.lat, p.lon] as L.LatLngTuple),
      { color: '#0b57a4', weight: 3, opacity: 0.8, className: 'track' },
    ).addTo(map);
    this.dots.addTo(map);
    points.forEach((p) => this.dot(p));
    const bounds = this.line.getBounds();
    if (also) bounds.extend(also);
    if (bounds.isValid() && points.length > 1) map.fitBounds(bounds, { padding: [24, 24], maxZoom: 16 });
  }

  /** Appends a position newer than the last one (answers whether it did). */
  add(p: TrackPoint): boolean {
    const last = this.points[this.points.length - 1];
    if (last && Date.parse(p.at) <= Date.parse(last.at)) return false;
    this.points.push(p);
    this.line.addLatLng([p.lat, p.lon]);
    this.dot(p);
    return true;
  }

  private dot(p: TrackPoint): void {
    const label = t('alert.trackPoint', { at: formatDateTime(p.at) });
    const m = L.circleMarker([p.lat, p.lon], { radius: 3, color: '#0b57a4', fillOpacity: 1, weight: 1, className: 'track-point' });
    m.bindTooltip(h('span', {}, label)).on('add', () => {
      m.getElement()?.setAttribute('role', 'img');
      m.getElement()?.setAttribute('aria-label', label);
    });
    m.addTo(this.dots);
  }
}
