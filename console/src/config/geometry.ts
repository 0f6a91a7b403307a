// Geofence shapes as the editor holds them, and the API's geometry fields (`GeofenceType`,
// `CircleCentre`/`CircleRadius`, `PolygonPositions`, `PolylinePositions`/`FenceWidth`).
// Pure: the Leaflet layers are converted to and from `Shape` in the page.

export interface LatLon {
  Lat: number;
  Lon: number;
}

export type ShapeKind = 'circle' | 'polygon' | 'polyline';
export const SHAPE_KINDS: readonly ShapeKind[] = ['circle', 'polygon', 'polyline'];

export type Shape =
  | { kind: 'circle'; centre: LatLon; radius: number }
  | { kind: 'polygon'; rings: LatLon[][] }
  | { kind: 'polyline'; points: LatLon[] };

/** The geofence record as the API reads and writes it. */
export interface Geofence {
  GeofenceId?: string | null;
  Name?: string | null;
  GeofenceType?: string | null;
  CircleCentre?: LatLon | null;
  CircleRadius?: number | null;
  PolygonPositions?: LatLon[][] | null;
  PolylinePositions?: LatLon[] | null;
  FenceWidth?: number | null;
  MinZoom?: number | null;
  MaxZoom?: number | null;
  Properties?: Record<string, string> | null;
  AppliesToSubtenants?: boolean;
  Timestamp?: string | null;
}

/** Six decimals of a degree are about 11 cm: more only looks precise. */
const round6 = (n: number): number => Math.round(n * 1e6) / 1e6;

/** A longitude brought into −180…180 (a map that wraps the world hands out others). */
export function wrapLon(lon: number): number {
  if (lon >= -180 && lon <= 180) return lon;
  const wrapped = ((((lon + 180) % 360) + 360) % 360) - 180;
  return wrapped === -180 && lon > 0 ? 180 : wrapped;
}

export function point(lat: number, lon: number): LatLon {
  return { Lat: round6(lat), Lon: round6(wrapLon(lon)) };
}

const same = (a: LatLon | undefined, b: LatLon | undefined): boolean =>
  !!a && !!b && a.Lat === b.Lat && a.Lon === b.Lon;

/** A ring without the closing point the server adds (a drawn polygon is closed anyway). */
export function openRing(ring: LatLon[]): LatLon[] {
  return ring.length > 1 && same(ring[0], ring[ring.length - 1]) ? ring.slice(0, -1) : ring;
}

/** The geometry fields of a geofence of this shape; the other type's fields are null. */
export function shapeFields(shape: Shape): Partial<Geofence> {
  const none = { CircleCentre: null, CircleRadius: null, PolygonPositions: null, PolylinePositions: null };
  switch (shape.kind) {
    case 'circle':
      return {
        ...none,
        GeofenceType: 'circle',
        CircleCentre: point(shape.centre.Lat, shape.centre.Lon),
        CircleRadius: Math.round(shape.radius),
      };
    case 'polygon':
      return {
        ...none,
        GeofenceType: 'polygon',
        PolygonPositions: shape.rings.map((r) => openRing(r.map((p) => point(p.Lat, p.Lon)))),
      };
    case 'polyline':
      return { ...none, GeofenceType: 'polyline', PolylinePositions: shape.points.map((p) => point(p.Lat, p.Lon)) };
  }
}

/** The shape a stored geofence describes, or null when its fields do not make one. */
export function geofenceShape(g: Geofence): Shape | null {
  switch ((g.GeofenceType ?? '').toLowerCase()) {
    case 'circle':
      return g.CircleCentre && typeof g.CircleRadius === 'number'
        ? { kind: 'circle', centre: g.CircleCentre, radius: g.CircleRadius }
        : null;
    case 'polygon':
      return g.PolygonPositions?.length ? { kind: 'polygon', rings: g.PolygonPositions.map(openRing) } : null;
    case 'polyline':
      return g.PolylinePositions?.length ? { kind: 'polyline', points: g.PolylinePositions } : null;
    default:
      return null;
  }
}

/** Positions as the editor's text shows them: one `lat, lon` a line. */
export function formatPositions(points: LatLon[]): string {
  return points.map((p) => `${p.Lat}, ${p.Lon}`).join('\n');
}

/**
 * Reads `lat, lon` lines (blank lines ignored). Answers the points, or the 1-based number
 * of the first line that is not two numbers. Ranges are the API's to check.
 */
export function parsePositions(text: string): { points: LatLon[] } | { badLine: number } {
  const points: LatLon[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? '').trim();
    if (!line) continue;
    const parts = line.split(/[,;\s]+/).filter(Boolean);
    const [lat, lon] = parts.map(Number);
    if (parts.length !== 2 || !Number.isFinite(lat) || !Number.isFinite(lon)) return { badLine: i + 1 };
    points.push({ Lat: lat as number, Lon: lon as number });
  }
  return { points };
}

/** Polygon rings as text: rings separated by an empty line (the first is the outline). */
export function formatRings(rings: LatLon[][]): string {
  return rings.map(formatPositions).join('\n\n');
}

export function parseRings(text: string): { rings: LatLon[][] } | { badLine: number } {
  const rings: LatLon[][] = [];
  let ring: LatLon[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i <= lines.length; i++) {
    const line = lines[i]?.trim() ?? '';
    if (!line) {
      if (ring.length) rings.push(ring);
      ring = [];
      continue;
    }
    const read = parsePositions(line);
    if ('badLine' in read) return { badLine: i + 1 };
    ring.push(...read.points);
  }
  return { rings };
}
