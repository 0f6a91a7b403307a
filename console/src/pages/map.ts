// Every device in scope at its last position, clustered, coloured by state, moved live;
// the geofences drawn beneath them (read-only, can be hidden).
import L from 'leaflet';
import 'leaflet.markercluster';
import 'leaflet.markercluster/dist/MarkerCluster.css';
import 'leaflet.markercluster/dist/MarkerCluster.Default.css';
import { api, v2 } from '../api';
import { h } from '../dom';
import { t } from '../i18n';
import { formatNumber } from '../format';
import { baseMap, geofenceLayer, type Geofence } from '../map';
import { tenant } from '../session';
import * as live from '../live';
import type { Device } from '../live';
import { deviceState, type DeviceState } from '../positions';

export { deviceState, type DeviceState };

const COLOURS: Record<DeviceState, string> = {
  emergency: '#b00020',
  reporting: '#1b7f3b',
  silent: '#a15c00',
  unknown: '#5f6b76',
};
const STATES = Object.keys(COLOURS) as DeviceState[];
/** Silence is a matter of time: states are looked at again this often. */
const RESTATE_EVERY_MS = 30_000;

/** A device's marker and what it was drawn with (to skip redraws that change nothing). */
interface Placed {
  marker: L.CircleMarker;
  device: Device;
  state: DeviceState;
}

function markerStyle(state: DeviceState): L.CircleMarkerOptions {
  return { radius: 8, color: COLOURS[state], fillColor: COLOURS[state], fillOpacity: 0.85, weight: 2 };
}

/** What a marker says to a screen reader (and to the e2e test): name, state, position. */
function markerLabel(d: Device, state: DeviceState): string {
  const at = d.LastPosition ? `${formatNumber(d.LastPosition.Lat)}, ${formatNumber(d.LastPosition.Lon)}` : '';
  return `${d.FriendlyName || d.DeviceId}: ${t(`map.state.${state}`)}, ${at}`;
}

/** A marker's SVG element, once on the map, carries its name and state. */
function labelElement(p: Placed): void {
  const el = p.marker.getElement();
  if (!el) return;
  el.setAttribute('role', 'img');
  el.setAttribute('aria-label', markerLabel(p.device, p.state));
  el.setAttribute('data-device', p.device.DeviceId);
  for (const s of STATES) el.classList.toggle(`state-${s}`, s === p.state);
}

/** A cluster says how many devices it holds, and turns red when one is in emergency. */
function clusterIcon(cluster: L.MarkerCluster): L.DivIcon {
  const children = cluster.getAllChildMarkers() as unknown as L.CircleMarker[];
  const emergencies = children.filter((m) => (m.options as { state?: DeviceState }).state === 'emergency').length;
  const n = children.length;
  const size = n < 10 ? 'small' : n < 100 ? 'medium' : 'large';
  const text = emergencies ? t('map.clusterEmergency', { n, e: emergencies }) : t('map.cluster', { n });
  return L.divIcon({
    html: `<div><span aria-hidden="true">${n}</span><span class="visually-hidden">${text}</span></div>`,
    className: `marker-cluster marker-cluster-${size}${emergencies ? ' cluster-emergency' : ''}`,
    iconSize: L.point(40, 40),
  });
}

export function mapPage(outlet: HTMLElement): () => void {
  const box = h('div', { class: 'device-map', 'data-testid': 'device-map' });
  const legend = h(
    'ul',
    { class: 'legend', 'aria-label': t('map.legend') },
    ...STATES.map((s) => h('li', {}, h('span', { class: `swatch state-${s}`, 'aria-hidden': 'true' }), t(`map.state.${s}`))),
  );
  const fencesToggle = h('input', { type: 'checkbox', id: 'show-geofences', checked: true, 'data-testid': 'show-geofences' });
  const count = h('p', { class: 'count', role: 'status', 'data-testid': 'map-count' }, t('map.loading'));
  outlet.append(
    h(
      'main',
      { class: 'map-page' },
      h('div', { class: 'map-head' },
        h('h1', {}, t('map.heading')),
        count,
        h('label', { class: 'toggle' }, fencesToggle, ' ', t('map.showGeofences')),
      ),
      legend,
      box,
    ),
  );
  const map = baseMap(box);
  const fences = L.layerGroup().addTo(map);
  const cluster = L.markerClusterGroup({
    chunkedLoading: true,
    chunkInterval: 100,
    chunkDelay: 16,
    showCoverageOnHover: false,
    iconCreateFunction: clusterIcon,
    chunkProgress: (done, total) => {
      if (done === total) box.dataset.ready = 'true';
    },
  });
  cluster.addTo(map);
  const placed = new Map<string, Placed>();
  let closed = false;
  let drawn = false;

  const markerFor = (d: Device, state: DeviceState, at: L.LatLngExpression): Placed => {
    const marker = L.circleMarker(at, { ...markerStyle(state), state } as L.CircleMarkerOptions);
    const p: Placed = { marker, device: d, state };
    marker.bindTooltip(() => markerLabel(p.device, p.state));
    marker.on('add', () => labelElement(p));
    return p;
  };

  const showCount = (): void => {
    box.dataset.devices = String(placed.size);
    count.textContent = t('map.count', { n: placed.size });
  };

  /** Draws every device anew (the first read, and after a gap). */
  const placeAll = (): void => {
    if (closed) return;
    drawn = true;
    cluster.clearLayers();
    placed.clear();
    delete box.dataset.ready;
    const now = Date.now();
    const markers: L.Layer[] = [];
    for (const [key, d] of live.devices) {
      if (!d.LastPosition) continue;
      const p = markerFor(d, deviceState(d, now), [d.LastPosition.Lat, d.LastPosition.Lon]);
      placed.set(key, p);
      markers.push(p.marker);
    }
    showCount();
    if (markers.length === 0) box.dataset.ready = 'true';
    else cluster.addLayers(markers);
  };

  /** One device's new record: moved, restyled, added or taken off. */
  const place = (d: Device, now: number): void => {
    const key = live.deviceKey(d.TenantCode ?? tenant(), d.DeviceId);
    const held = placed.get(key);
    if (!d.LastPosition) {
      if (held) cluster.removeLayer(held.marker);
      placed.delete(key);
      return;
    }
    const state = deviceState(d, now);
    const at = L.latLng(d.LastPosition.Lat, d.LastPosition.Lon);
    if (!held) {
      const p = markerFor(d, state, at);
      placed.set(key, p);
      cluster.addLayer(p.marker);
      return;
    }
    held.device = d;
    if (!held.marker.getLatLng().equals(at)) held.marker.setLatLng(at); // the cluster follows its 'move'
    if (held.state !== state) restyle(held, state);
    else labelElement(held);
  };

  const restyle = (p: Placed, state: DeviceState): void => {
    p.state = state;
    (p.marker.options as { state?: DeviceState }).state = state;
    p.marker.setStyle(markerStyle(state));
    labelElement(p);
    cluster.refreshClusters(p.marker as unknown as L.Marker);
  };

  // Stream bursts are coalesced: the latest record of each device, drawn once per frame.
  const waiting = new Map<string, Device>();
  let frame = 0;
  const drawWaiting = (): void => {
    frame = 0;
    if (closed) return;
    const now = Date.now();
    const before = placed.size;
    waiting.forEach((d) => place(d, now));
    waiting.clear();
    if (placed.size !== before) showCount();
    box.dataset.updates = String(Number(box.dataset.updates ?? 0) + 1);
  };
  const offs = [
    live.deviceChanged.on((d) => {
      waiting.set(live.deviceKey(d.TenantCode ?? tenant(), d.DeviceId), d);
      frame ||= requestAnimationFrame(drawWaiting);
    }),
    live.devicesReloaded.on(placeAll),
  ];
  const restate = window.setInterval(() => {
    const now = Date.now();
    for (const p of placed.values()) {
      const state = deviceState(p.device, now);
      if (state !== p.state) restyle(p, state);
    }
  }, RESTATE_EVERY_MS);

  fencesToggle.addEventListener('change', () => {
    if (fencesToggle.checked) fences.addTo(map);
    else fences.remove();
  });
  void readGeofences().then((list) => {
    if (closed) return;
    geofenceLayer(list).addTo(fences);
    box.dataset.geofences = String(list.length);
  });

  // Another page may have read them already; otherwise this read draws them.
  void live.loadDevices().then(() => drawn || placeAll(), () => {
    count.textContent = t('map.failed');
  });
  return () => {
    closed = true;
    offs.forEach((off) => off());
    window.clearInterval(restate);
    if (frame) cancelAnimationFrame(frame);
    map.remove();
  };
}

/** The geofences of every tenant in scope (each once: an ancestor's shared ones too). */
async function readGeofences(): Promise<Geofence[]> {
  const lists = await Promise.all(
    (await live.tenantsInScope()).map((tc) => api.get<Geofence[]>(v2(tc, 'geofences')).catch(() => [] as Geofence[])),
  );
  const seen = new Set<string>();
  return lists.flat().filter((g) => {
    const id = g.GeofenceId ?? '';
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}
