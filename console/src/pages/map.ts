// Every device in scope at its last position, clustered, coloured by state (the legend's
// colours, the stylesheet's), moved live; the geofences drawn beneath them (read-only,
// can be hidden). The map opens fitted to the devices; a click on a marker opens its
// device, or its open alert when it is in emergency; the devices in emergency are also
// listed beside the map (name, since when, the alert).
import L from 'leaflet';
import 'leaflet.markercluster';
import 'leaflet.markercluster/dist/MarkerCluster.css';
import 'leaflet.markercluster/dist/MarkerCluster.Default.css';
import { api, v2 } from '../api';
import { h } from '../dom';
import { t } from '../i18n';
import { formatDateTime, formatNumber } from '../format';
import { baseMap, geofenceLayer, pane, removeMap, type Geofence } from '../map';
import { navigate } from '../router';
import { tenant } from '../session';
import { devicePath } from './devices';
import { alertPath } from './queue';
import * as live from '../live';
import type { Device } from '../live';
import { deviceState, type DeviceState } from '../positions';

export { deviceState, type DeviceState };

/** Each state's colour: the stylesheet's variable the legend's swatch uses, else this. */
const COLOURS: Record<DeviceState, [string, string]> = {
  emergency: ['--high-fill', '#b00020'],
  reporting: ['--ok-fill', '#1b7f3b'],
  silent: ['--silent-fill', '#a15c00'],
  unknown: ['--unknown-fill', '#5f6b76'],
};
const STATES = Object.keys(COLOURS) as DeviceState[];
/** The colours as the page's theme says now (read when a map page opens). */
let colours: Record<DeviceState, string> = Object.fromEntries(STATES.map((s) => [s, COLOURS[s][1]])) as Record<DeviceState, string>;
function readColours(): void {
  const style = getComputedStyle(document.documentElement);
  colours = Object.fromEntries(STATES.map((s) => [s, style.getPropertyValue(COLOURS[s][0]).trim() || COLOURS[s][1]])) as Record<DeviceState, string>;
}
/** The most the first fit zooms in (one device: its street, not its doorstep). */
const FIT_MAX_ZOOM = 13;
/** Silence is a matter of time: states are looked at again this often. */
const RESTATE_EVERY_MS = 30_000;
/** The longest stretch of work before the page gets the main thread back. */
const SLICE_MS = 12;
/** Devices redrawn in one frame at most (500 events a second are ~10 a frame). */
const MOST_PER_FRAME = 400;
/**
 * Moved markers are redrawn at most this often: each redraw recounts the clusters and
 * replaces their icons whatever the number of devices it moves, so fewer, larger batches
 * cost the page far less (bench/console.sh) for a marker at most a quarter second late.
 */
const DRAW_EVERY_MS = 250;

/** A device's marker and what it was drawn with (to skip redraws that change nothing). */
interface Placed {
  marker: L.CircleMarker;
  device: Device;
  state: DeviceState;
  labelled?: { device: Device; state: DeviceState; label: string };
}

function markerStyle(state: DeviceState): L.CircleMarkerOptions {
  return { radius: 8, color: colours[state], fillColor: colours[state], fillOpacity: 0.85, weight: 2 };
}

/** What a marker says to a screen reader (and to the e2e test): name, state, position. */
function markerLabel(d: Device, state: DeviceState): string {
  const at = d.LastPosition ? `${formatNumber(d.LastPosition.Lat)}, ${formatNumber(d.LastPosition.Lon)}` : '';
  return `${d.FriendlyName || d.DeviceId}: ${t(`map.state.${state}`)}, ${at}`;
}

/** A marker's SVG element, once on the map, carries its name and state (the label is
 * worked out only for markers shown, and again only when their record changed). */
function labelElement(p: Placed): void {
  const el = p.marker.getElement();
  if (!el) return;
  if (p.labelled?.device !== p.device || p.labelled.state !== p.state) {
    p.labelled = { device: p.device, state: p.state, label: markerLabel(p.device, p.state) };
  }
  el.setAttribute('role', 'img');
  el.setAttribute('aria-label', p.labelled.label);
  el.setAttribute('data-device', p.device.DeviceId);
  for (const s of STATES) el.classList.toggle(`state-${s}`, s === p.state);
}

/** A cluster says how many devices it holds (emergencies are never in one). */
function clusterIcon(cluster: L.MarkerCluster): L.DivIcon {
  const n = cluster.getChildCount();
  const size = n < 10 ? 'small' : n < 100 ? 'medium' : 'large';
  return L.divIcon({
    html: h('div', {}, h('span', { 'aria-hidden': 'true' }, n), h('span', { class: 'visually-hidden' }, t('map.cluster', { n }))),
    className: `marker-cluster marker-cluster-${size}`,
    iconSize: L.point(40, 40),
  });
}

/** The device's open alert when it is in emergency (its marker and list entry open it). */
function alertOf(d: Device, state: DeviceState): ReturnType<typeof live.alerts.openAlertOf> {
  return state === 'emergency' ? live.alerts.openAlertOf(d.TenantCode ?? tenant(), d.DeviceId) : undefined;
}

/** Where a click on the device goes: its open alert in an emergency, else its page. */
function pathOf(d: Device, state: DeviceState): string {
  const open = alertOf(d, state);
  return open ? alertPath(open) : devicePath({ TenantCode: d.TenantCode ?? tenant(), DeviceId: d.DeviceId });
}

export function mapPage(outlet: HTMLElement): () => void {
  readColours();
  const box = h('div', { class: 'device-map', 'data-testid': 'device-map' });
  const emergencies = h('ul', { class: 'emergency-list', 'data-testid': 'emergency-list' });
  const emergencyBox = h(
    'aside',
    { class: 'emergencies', 'aria-labelledby': 'emergencies-h' },
    h('h2', { id: 'emergencies-h' }, t('duty.emergencies')),
    emergencies,
  );
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
      h('div', { class: 'map-with-list' }, box, emergencyBox),
    ),
  );
  const map = baseMap(box);
  // The zoom, for people's tools and the e2e scenarios (the world view is 2).
  map.on('zoomend', () => (box.dataset.zoom = String(map.getZoom())));
  let placingTotal = -1;
  let placingNow = false;
  const fences = L.layerGroup().addTo(map);
  const cluster = L.markerClusterGroup({
    chunkedLoading: true,
    chunkInterval: 50,
    chunkDelay: 16,
    showCoverageOnHover: false,
    // Street level shows every device; fewer zoom levels of clusters to keep up to date.
    disableClusteringAtZoom: 15,
    iconCreateFunction: clusterIcon,
    chunkProgress: (done, total) => {
      // The full draw's markers are in (its chunks span several tasks).
      if (placingNow && done === total && total === placingTotal) donePlacing();
    },
  });
  cluster.addTo(map);
  // Devices in emergency are never hidden in a cluster: their own layer, above the clusters.
  pane(map, 'urgent');
  const urgent = L.featureGroup().addTo(map);
  const placed = new Map<string, Placed>();
  let closed = false;
  let drawn = false;

  const markerFor = (d: Device, state: DeviceState, at: L.LatLngExpression): Placed => {
    const marker = L.circleMarker(at, { ...markerStyle(state), ...(state === 'emergency' ? { pane: 'urgent' } : {}) });
    const p: Placed = { marker, device: d, state };
    // An element, never a string: Leaflet writes a string tooltip as HTML.
    marker.bindTooltip(() => h('span', {}, markerLabel(p.device, p.state)));
    marker.on('add', () => labelElement(p));
    // A click opens the device's page (its state, messages, track), or its open alert.
    marker.on('click', () => navigate(pathOf(p.device, p.state)));
    return p;
  };

  const showCount = (): void => {
    box.dataset.devices = String(placed.size);
    count.textContent = t('map.count', { n: placed.size });
    listEmergencies();
  };

  /** The devices in emergency, newest alert first: name, since when, a link to the alert. */
  const listEmergencies = (): void => {
    const items = [...placed.values()]
      .filter((p) => p.state === 'emergency')
      .map((p) => ({ p, open: alertOf(p.device, p.state) }))
      .map(({ p, open }) => ({ p, open, since: open?.RaisedAt ?? p.device.LastMessageTime ?? '' }))
      .sort((a, b) => b.since.localeCompare(a.since));
    // Redrawn only when it changed (never pulled from under a pointer or the focus).
    const drawn = items.map(({ p, open, since }) => `${p.device.DeviceId}|${p.device.FriendlyName}|${open?.AlertId}|${since}`).join('\n');
    if (drawn === emergencies.dataset.drawn) return;
    emergencies.dataset.drawn = drawn;
    emergencies.replaceChildren(
      ...(items.length === 0
        ? [h('li', { class: 'empty' }, t('duty.noEmergency'))]
        : items.map(({ p, open, since }) =>
            h(
              'li',
              { 'data-device': p.device.DeviceId },
              h('span', { class: 'swatch state-emergency', 'aria-hidden': 'true' }),
              h('a', { href: pathOf(p.device, p.state), 'data-link': true }, p.device.FriendlyName || p.device.DeviceId),
              ' ',
              h('span', { class: 'since' }, since ? t('duty.since', { at: formatDateTime(since) }) : ''),
              open ? h('span', { class: 'alert-link' }, ' — ', h('a', { href: alertPath(open), 'data-link': true }, t('duty.openAlert'))) : '',
            ),
          )),
    );
    emergencyBox.dataset.count = String(items.length);
  };

  /** The first draw: the map shows every device (at most FIT_MAX_ZOOM in), not the world. */
  let fitted = false;
  const fitToDevices = (): void => {
    if (fitted || placed.size === 0) return;
    fitted = true;
    const bounds = L.latLngBounds([...placed.values()].map((p) => p.marker.getLatLng()));
    map.fitBounds(bounds, { padding: [32, 32], maxZoom: FIT_MAX_ZOOM, animate: false });
    box.dataset.fitted = 'true';
    box.dataset.zoom = String(map.getZoom());
  };

  /**
   * Draws every device anew (the first read, and after a gap), in slices of a few
   * milliseconds so that 10,000 markers never hold the page; stream updates wait meanwhile.
   */
  let placing = 0;
  const placeAll = async (): Promise<void> => {
    if (closed) return;
    const generation = ++placing;
    placingNow = true;
    drawn = true;
    cluster.clearLayers();
    urgent.clearLayers();
    placed.clear();
    delete box.dataset.ready;
    const now = Date.now();
    const clustered: L.Layer[] = [];
    let slice = performance.now();
    let i = 0;
    for (const [key, d] of [...live.devices]) {
      if ((++i & 127) === 0 && performance.now() - slice > SLICE_MS) {
        await new Promise((resolve) => setTimeout(resolve, 0));
        if (closed || generation !== placing) return;
        slice = performance.now();
      }
      if (!d.LastPosition) continue;
      const state = deviceState(d, now);
      const p = markerFor(d, state, [d.LastPosition.Lat, d.LastPosition.Lon]);
      placed.set(key, p);
      if (state === 'emergency') urgent.addLayer(p.marker);
      else clustered.push(p.marker);
    }
    showCount();
    fitToDevices();
    placingTotal = clustered.length;
    if (clustered.length === 0) donePlacing();
    else cluster.addLayers(clustered);
  };
  /** The full draw is over: updates that waited are drawn. */
  const donePlacing = (): void => {
    placingNow = false;
    box.dataset.ready = 'true';
    if (waiting.size) drawSoon();
  };

  const restyle = (p: Placed, state: DeviceState): void => {
    p.state = state;
    p.marker.setStyle(markerStyle(state));
    labelElement(p);
  };

  /**
   * The latest record of each device changed since the last redraw, drawn at once (in an
   * animation frame, at most every DRAW_EVERY_MS): the clustered markers that move leave
   * the cluster together and come back together, so the clusters are counted and their
   * icons redrawn once per batch, not once per device.
   */
  const waiting = new Map<string, Device>();
  let frame = 0;
  let pause = 0;
  let lastDraw = 0;
  const drawSoon = (): void => {
    if (frame || pause || placingNow || closed) return;
    const wait = lastDraw + DRAW_EVERY_MS - performance.now();
    if (wait <= 0) frame = requestAnimationFrame(drawWaiting);
    else pause = window.setTimeout(() => ((pause = 0), (frame = requestAnimationFrame(drawWaiting))), wait);
  };
  const drawWaiting = (): void => {
    frame = 0;
    if (closed || placingNow) return;
    lastDraw = performance.now();
    const now = Date.now();
    const before = placed.size;
    const leaving: L.Layer[] = [];
    const coming: L.Layer[] = [];
    const moves: [Placed, L.LatLng][] = [];
    // A page that fell behind catches up over several frames, never in one long task.
    let budget = MOST_PER_FRAME;
    for (const [key, d] of waiting) {
      if (budget-- === 0) break;
      waiting.delete(key);
      let held = placed.get(key);
      const state = d.LastPosition ? deviceState(d, now) : null;
      // Gone from the map, or into or out of emergency (another layer and pane).
      if (held && (state === null || (state === 'emergency') !== (held.state === 'emergency'))) {
        if (held.state === 'emergency') urgent.removeLayer(held.marker);
        else leaving.push(held.marker);
        placed.delete(key);
        held = undefined;
      }
      if (!d.LastPosition || state === null) continue;
      const at = L.latLng(d.LastPosition.Lat, d.LastPosition.Lon);
      if (!held) {
        const p = markerFor(d, state, at);
        placed.set(key, p);
        if (state === 'emergency') urgent.addLayer(p.marker);
        else coming.push(p.marker);
        continue;
      }
      held.device = d;
      if (held.state !== state) restyle(held, state);
      if (state !== 'emergency' && !held.marker.getLatLng().equals(at)) {
        moves.push([held, at]);
        continue;
      }
      held.marker.setLatLng(at);
      labelElement(held);
    }
    if (waiting.size) drawSoon();
    if (moves.length) leaving.push(...moves.map(([p]) => p.marker));
    if (leaving.length) cluster.removeLayers(leaving);
    for (const [p, at] of moves) {
      p.marker.setLatLng(at);
      coming.push(p.marker);
    }
    if (coming.length) cluster.addLayers(coming);
    if (placed.size !== before) showCount();
    else listEmergencies();
    box.dataset.updates = String(Number(box.dataset.updates ?? 0) + 1);
  };
  const offs = [
    // An alert raised or closed changes where an emergency's marker and entry lead.
    live.alertChanged.on(() => listEmergencies()),
    live.queueReloaded.on(() => listEmergencies()),
    live.deviceChanged.on((d) => {
      waiting.set(live.deviceKey(d.TenantCode ?? tenant(), d.DeviceId), d);
      drawSoon();
    }),
    live.devicesReloaded.on(() => void placeAll()),
  ];
  const restate = window.setInterval(() => {
    const now = Date.now();
    for (const p of placed.values()) {
      const state = deviceState(p.device, now);
      if (state !== p.state && state !== 'emergency' && p.state !== 'emergency') restyle(p, state);
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

  // Another page may have read them already (then no reload is announced): draw them.
  void live.loadDevices().then(
    () => {
      if (!drawn) void placeAll();
    },
    () => {
      count.textContent = t('map.failed');
    },
  );
  return () => {
    closed = true;
    offs.forEach((off) => off());
    window.clearInterval(restate);
    if (frame) cancelAnimationFrame(frame);
    window.clearTimeout(pause);
    removeMap(map);
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
