// The base map: Leaflet (no WebGL) over the bundled Natural Earth world outline, and a
// tile layer only when the server names one (--map-tile-url).
import L from 'leaflet';
import 'leaflet/dist/leaflet.css';
import { feature } from 'topojson-client';
import type { Topology, GeometryCollection } from 'topojson-specification';
import atlasUrl from 'world-atlas/countries-50m.json?url';
import { h } from './dom';
import { t } from './i18n';

let outline: Promise<GeoJSON.FeatureCollection | null> | null = null;

function worldOutline(): Promise<GeoJSON.FeatureCollection | null> {
  outline ??= fetch(atlasUrl, { credentials: 'same-origin' })
    .then((r) => r.json() as Promise<Topology<{ countries: GeometryCollection }>>)
    .then((topology) => unwrapped(feature(topology, topology.objects.countries) as GeoJSON.FeatureCollection))
    .catch(() => null);
  return outline;
}

/**
 * The atlas's rings that cross the antimeridian jump from +180 to −180, which a flat map
 * draws as a band across the world: each such ring is continued past ±180 instead.
 * Antarctica (a ring around the pole) is left out.
 */
export function unwrapped(world: GeoJSON.FeatureCollection): GeoJSON.FeatureCollection {
  const ring = (points: GeoJSON.Position[]): GeoJSON.Position[] => {
    let shift = 0;
    return points.map(([lon = 0, lat = 0], i) => {
      const previous = points[i - 1]?.[0];
      if (previous !== undefined && Math.abs(lon - previous) > 180) shift += lon < previous ? 360 : -360;
      return [lon + shift, lat];
    });
  };
  const features = world.features
    .filter((f) => f.id !== '010')
    .map((f) => {
      const g = f.geometry;
      if (g?.type === 'Polygon') return { ...f, geometry: { ...g, coordinates: g.coordinates.map(ring) } };
      if (g?.type === 'MultiPolygon') return { ...f, geometry: { ...g, coordinates: g.coordinates.map((p) => p.map(ring)) } };
      return f;
    });
  return { ...world, features };
}

/**
 * The console's own panes and where they sit among Leaflet's (tiles 200, overlay 400 —
 * vector markers, tracks, geofences —, markers 600 — the clusters —, tooltips 650,
 * popups 700): the world outline under everything drawn on it, the devices in emergency
 * above the clusters but under the tooltips. Set on the pane itself, as Leaflet's own are
 * in `leaflet.css`: a stylesheet rule `.leaflet-outline-pane` has the specificity of
 * `.leaflet-pane { z-index: 400 }`, and which of the two won depended on the order the
 * bundle put the stylesheets in (it lost: the outline covered the markers).
 */
export const PANES = { outline: 250, urgent: 620 } as const;

/** The map's pane `name` (made once) at its place in `PANES`. */
export function pane(map: L.Map, name: keyof typeof PANES): HTMLElement {
  const el = map.getPane(name) ?? map.createPane(name);
  el.style.zIndex = String(PANES[name]);
  return el;
}

export function tileUrl(): string {
  return document.querySelector<HTMLMetaElement>('meta[name="safetrack-map-tile-url"]')?.content.trim() ?? '';
}

/** The maps whose zoom animation is running (see `removeMap`). */
// Leaflet 1.9.4's canvas renderer (the world outline) can draw after it was removed:
// `_updatePaths` redraws at once and forgets a redraw already asked for a frame later,
// without cancelling it, so removing the map in between leaves that frame to run with
// the canvas gone ("Cannot read properties of undefined (reading 'save')" when a page
// is left within a frame of a move, e.g. a session that expired on the map). A redraw
// without its canvas draws nothing.
type CanvasInternals = { _ctx?: CanvasRenderingContext2D; _redraw: () => void };
const canvasProto = L.Canvas.prototype as unknown as CanvasInternals;
const redrawWithCanvas = canvasProto._redraw;
canvasProto._redraw = function (this: CanvasInternals): void {
  if (this._ctx) redrawWithCanvas.call(this);
};

const zooming = new WeakSet<L.Map>();

/**
 * Removes a map when its page is left. Leaflet 1.9 ends a zoom animation on a timer that
 * reads the map's panes, which `remove` deletes: a page left mid-zoom threw ("reading
 * '_leaflet_pos'"). A map still zooming is removed once the zoom ends (a second at most).
 */
export function removeMap(map: L.Map): void {
  let removed = false;
  const remove = (): void => {
    if (removed) return;
    removed = true;
    map.remove();
  };
  if (!zooming.has(map)) return remove();
  map.once('zoomend', remove);
  window.setTimeout(remove, 1000);
}

export function baseMap(container: HTMLElement, center: L.LatLngExpression = [20, 0], zoom = 2): L.Map {
  container.setAttribute('role', 'region');
  container.setAttribute('aria-label', t('map.label'));
  const map = L.map(container, { worldCopyJump: true, maxZoom: 18, minZoom: 1 }).setView(center, zoom);
  map.on('zoomstart', () => zooming.add(map));
  map.on('zoomend', () => zooming.delete(map));
  map.attributionControl.setPrefix(false);
  const tiles = tileUrl();
  if (tiles) {
    L.tileLayer(tiles, { maxZoom: 19 }).addTo(map);
  } else {
    container.classList.add('offline-map');
    pane(map, 'outline');
    void worldOutline().then((world) => {
      // The page may have been left (and the map removed) meanwhile.
      if (!world || !container.isConnected) return;
      // On a canvas in a pane of its own beneath every shape: no SVG nodes for the ~100,000
      // points of the outline, and drawn under the devices whatever the order of loading.
      // Added a few countries at a time, so that building it never holds the page.
      const layer = L.geoJSON(undefined, {
        interactive: false,
        pane: 'outline',
        renderer: L.canvas({ pane: 'outline' }),
        smoothFactor: 1.5,
        style: outlineStyle(),
        attribution: 'Natural Earth',
      } as L.GeoJSONOptions).addTo(map);
      // The theme's colours (style.css: --map-land, --map-border), again when it changes.
      const restyle = (): void => {
        if (container.isConnected) layer.setStyle(outlineStyle());
        else document.removeEventListener('safetrack:theme', restyle);
      };
      document.addEventListener('safetrack:theme', restyle);
      let next = 0;
      const addSome = (): void => {
        if (!container.isConnected) return;
        const until = performance.now() + 10;
        while (next < world.features.length && performance.now() < until) {
          const country = world.features[next++];
          if (country) layer.addData(country);
        }
        if (next < world.features.length) setTimeout(addSome, 0);
      };
      addSome();
    });
  }
  return map;
}

export interface LatLon {
  Lat: number;
  Lon: number;
}

export interface Geofence {
  GeofenceId?: string;
  Name?: string | null;
  GeofenceType?: 'circle' | 'polygon' | 'polyline' | string | null;
  CircleCentre?: LatLon | null;
  CircleRadius?: number | null;
  PolygonPositions?: LatLon[][] | null;
  PolylinePositions?: LatLon[] | null;
  FenceWidth?: number | null;
}

/** The outline's colours from the theme (style.css's --map-land and --map-border). */
function outlineStyle(): L.PathOptions {
  const css = getComputedStyle(document.documentElement);
  const read = (name: string, fallback: string): string => css.getPropertyValue(name).trim() || fallback;
  return { color: read('--map-border', '#6b7b8c'), weight: 0.7, fillColor: read('--map-land', '#e8ecef'), fillOpacity: 1 };
}

const FENCE_STYLE: L.PathOptions = { color: '#0b57a4', weight: 2, fillOpacity: 0.08, dashArray: '6 4' };

/** One geofence as a shape (null when its record has no usable shape). */
export function geofenceShape(g: Geofence): L.Path | null {
  const ll = (p: LatLon): L.LatLngTuple => [p.Lat, p.Lon];
  const style = { ...FENCE_STYLE, className: 'geofence' };
  if (g.GeofenceType === 'circle' && g.CircleCentre && g.CircleRadius) {
    return L.circle(ll(g.CircleCentre), { ...style, radius: g.CircleRadius });
  }
  if (g.GeofenceType === 'polygon' && g.PolygonPositions?.length) {
    return L.polygon(g.PolygonPositions.map((ring) => ring.map(ll)), style);
  }
  if (g.GeofenceType === 'polyline' && g.PolylinePositions?.length) {
    return L.polyline(g.PolylinePositions.map(ll), { ...style, fill: false });
  }
  return null;
}

/** The geofences, read-only: each named in a tooltip and to screen readers. */
export function geofenceLayer(list: Geofence[]): L.LayerGroup {
  const group = L.layerGroup();
  for (const g of list) {
    const shape = geofenceShape(g);
    if (!shape) continue;
    const name = g.Name || g.GeofenceId || '';
    shape.bindTooltip(h('span', {}, name), { sticky: true });
    shape.on('add', () => {
      const el = shape.getElement();
      el?.setAttribute('role', 'img');
      el?.setAttribute('aria-label', t('map.geofence', { name }));
      el?.setAttribute('data-geofence', g.GeofenceId ?? '');
    });
    group.addLayer(shape);
  }
  return group;
}
