// The base map: Leaflet (no WebGL) over the bundled Natural Earth world outline, and a
// tile layer only when the server names one (--map-tile-url).
import L from 'leaflet';
import 'leaflet/dist/leaflet.css';
import { feature } from 'topojson-client';
import type { Topology, GeometryCollection } from 'topojson-specification';
import atlasUrl from 'world-atlas/countries-50m.json?url';
import { t } from './i18n';

let outline: Promise<GeoJSON.FeatureCollection | null> | null = null;

function worldOutline(): Promise<GeoJSON.FeatureCollection | null> {
  outline ??= fetch(atlasUrl, { credentials: 'same-origin' })
    .then((r) => r.json() as Promise<Topology<{ countries: GeometryCollection }>>)
    .then((topology) => feature(topology, topology.objects.countries) as GeoJSON.FeatureCollection)
    .catch(() => null);
  return outline;
}

export function tileUrl(): string {
  return document.querySelector<HTMLMetaElement>('meta[name="safetrack-map-tile-url"]')?.content.trim() ?? '';
}

export function baseMap(container: HTMLElement, center: L.LatLngExpression = [20, 0], zoom = 2): L.Map {
  container.setAttribute('role', 'region');
  container.setAttribute('aria-label', t('map.label'));
  const map = L.map(container, { worldCopyJump: true, preferCanvas: false }).setView(center, zoom);
  map.attributionControl.setPrefix(false);
  const tiles = tileUrl();
  if (tiles) {
    L.tileLayer(tiles, { maxZoom: 19 }).addTo(map);
  } else {
    container.classList.add('offline-map');
    void worldOutline().then((world) => {
      if (!world) return;
      L.geoJSON(world, {
        interactive: false,
        style: { color: '#6b7b8c', weight: 0.7, fillColor: '#e8ecef', fillOpacity: 1 },
        attribution: 'Natural Earth',
      })
        .addTo(map)
        .bringToBack();
    });
  }
  return map;
}
