// Every device in scope at its last position, clustered, coloured by state; moved live.
import L from 'leaflet';
import 'leaflet.markercluster';
import 'leaflet.markercluster/dist/MarkerCluster.css';
import 'leaflet.markercluster/dist/MarkerCluster.Default.css';
import { api, v2 } from '../api';
import { h } from '../dom';
import { t } from '../i18n';
import { baseMap } from '../map';
import { tenant } from '../session';
import * as live from '../live';
import type { Device } from '../live';

export type DeviceState = 'emergency' | 'reporting' | 'silent' | 'unknown';

/** Emergency; silent past its check-in interval; reporting; or no position at all. */
export function deviceState(d: Device, now: number): DeviceState {
  if (d.EmergencyState === 'Active') return 'emergency';
  if (!d.LastPosition) return 'unknown';
  if (d.CheckInIntervalMinutes && d.LastMessageTime) {
    const silentFor = now - Date.parse(d.LastMessageTime);
    if (silentFor > d.CheckInIntervalMinutes * 60_000) return 'silent';
  }
  return 'reporting';
}

const COLOURS: Record<DeviceState, string> = {
  emergency: '#b00020',
  reporting: '#1b7f3b',
  silent: '#a15c00',
  unknown: '#5f6b76',
};

/** The tenant and its subtenants, depth first. */
async function tenantsInScope(root: string): Promise<string[]> {
  const out = [root];
  for (let i = 0; i < out.length && out.length < 500; i++) {
    const children = await api.get<{ TenantCode?: string }[]>(v2(out[i] ?? '', 'tenants')).catch(() => []);
    for (const c of children) if (c.TenantCode) out.push(c.TenantCode);
  }
  return out;
}

export function mapPage(outlet: HTMLElement): () => void {
  const box = h('div', { class: 'device-map', 'data-testid': 'device-map' });
  const legend = h(
    'ul',
    { class: 'legend', 'aria-label': t('map.legend') },
    ...(Object.keys(COLOURS) as DeviceState[]).map((s) =>
      h('li', {}, h('span', { class: `swatch state-${s}`, 'aria-hidden': 'true' }), t(`map.state.${s}`)),
    ),
  );
  outlet.append(h('main', { class: 'map-page' }, h('h1', {}, t('map.heading')), legend, box));
  const map = baseMap(box);
  const cluster = L.markerClusterGroup({ chunkedLoading: true, showCoverageOnHover: false });
  cluster.addTo(map);
  const markers = new Map<string, L.CircleMarker>();

  let closed = false;
  const place = (d: Device): void => {
    if (closed) return;
    const key = live.deviceKey(d.TenantCode ?? tenant(), d.DeviceId);
    const held = markers.get(key);
    if (!d.LastPosition) {
      if (held) cluster.removeLayer(held);
      markers.delete(key);
      return;
    }
    const state = deviceState(d, Date.now());
    const at: L.LatLngExpression = [d.LastPosition.Lat, d.LastPosition.Lon];
    const style = { radius: 8, color: COLOURS[state], fillColor: COLOURS[state], fillOpacity: 0.85, weight: 2 };
    if (held) {
      held.setLatLng(at).setStyle(style);
      cluster.refreshClusters(held as unknown as L.Marker);
    } else {
      const m = L.circleMarker(at, style).bindTooltip(d.FriendlyName || d.DeviceId);
      markers.set(key, m);
      cluster.addLayer(m);
    }
  };

  // Stream bursts are coalesced: at most one redraw per animation frame.
  const waiting = new Map<string, Device>();
  let frame = 0;
  const off = live.deviceChanged.on((d) => {
    waiting.set(live.deviceKey(d.TenantCode ?? tenant(), d.DeviceId), d);
    frame ||= requestAnimationFrame(() => {
      frame = 0;
      waiting.forEach(place);
      waiting.clear();
    });
  });

  void (async () => {
    for (const tc of await tenantsInScope(tenant())) {
      const list = await api.all<Device>(v2(tc, 'devices')).catch(() => [] as Device[]);
      for (const d of list) {
        const withTenant = { ...d, TenantCode: d.TenantCode ?? tc };
        live.devices.set(live.deviceKey(tc, d.DeviceId), withTenant);
        place(withTenant);
      }
    }
  })();
  return () => {
    closed = true;
    off();
    if (frame) cancelAnimationFrame(frame);
    map.remove();
  };
}
