// Geofences: the list, and a shape drawn or edited on the map (Leaflet-Geoman) or typed
// as coordinates, saved through the API; its 400s beside the form's fields and, for the
// shape's own fields, on the shape.
import L from 'leaflet';
import '@geoman-io/leaflet-geoman-free';
import '@geoman-io/leaflet-geoman-free/dist/leaflet-geoman.css';
import { api, v2 } from '../../api';
import { h, replaceRows } from '../../dom';
import { t } from '../../i18n';
import { baseMap, removeMap } from '../../map';
import { tenant } from '../../session';
import { mayConfigure } from '../../config/access';
import { FormErrors, checkbox, describeFailure, field, sectionNav, statusLine, textInput } from '../../config/form';
import { fieldMessages } from '../../config/problems';
import {
  SHAPE_KINDS,
  formatPositions,
  formatRings,
  geofenceShape,
  parsePositions,
  parseRings,
  point,
  shapeFields,
  type Geofence,
  type Shape,
  type ShapeKind,
} from '../../config/geometry';

const SHAPE_FIELDS = ['CircleCentre', 'CircleRadius', 'PolygonPositions', 'PolylinePositions', 'FenceWidth', 'GeofenceType'];
const DRAW_MODE: Record<ShapeKind, 'Circle' | 'Polygon' | 'Line'> = { circle: 'Circle', polygon: 'Polygon', polyline: 'Line' };
const EDITED = { color: '#0b57a4', weight: 3, fillOpacity: 0.2 };
const OTHERS = { color: '#5f6b76', weight: 2, fillOpacity: 0.08, dashArray: '4 4' };

/** The shape a Leaflet layer draws (what Geoman made or edited). */
function layerShape(layer: L.Layer): Shape | null {
  if (layer instanceof L.Circle) {
    const c = layer.getLatLng();
    return { kind: 'circle', centre: point(c.lat, c.lng), radius: layer.getRadius() };
  }
  if (layer instanceof L.Polygon) {
    const rings = layer.getLatLngs() as L.LatLng[][];
    return { kind: 'polygon', rings: rings.map((r) => r.map((p) => point(p.lat, p.lng))) };
  }
  if (layer instanceof L.Polyline) {
    const points = layer.getLatLngs() as L.LatLng[];
    return { kind: 'polyline', points: points.map((p) => point(p.lat, p.lng)) };
  }
  return null;
}

function shapeLayer(shape: Shape, style: L.PathOptions): L.Path {
  switch (shape.kind) {
    case 'circle':
      return L.circle([shape.centre.Lat, shape.centre.Lon], { ...style, radius: shape.radius });
    case 'polygon':
      return L.polygon(shape.rings.map((r) => r.map((p) => [p.Lat, p.Lon] as L.LatLngTuple)), style);
    case 'polyline':
      return L.polyline(shape.points.map((p) => [p.Lat, p.Lon] as L.LatLngTuple), style);
  }
}

export function geofencesPage(outlet: HTMLElement): () => void {
  const tc = tenant();
  const manage = mayConfigure();
  const status = statusLine('geofence-status');
  const rows = h('tbody');
  const table = h(
    'table',
    { class: 'records', 'data-testid': 'geofence-list' },
    h('caption', { class: 'visually-hidden' }, t('config.geofences.heading')),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('config.geofences.name')), h('th', { scope: 'col' }, t('config.geofences.type')), h('th', { scope: 'col' }, t('config.appliesToSubtenants')), h('th', { scope: 'col' }, t('config.actions')))),
    rows,
  );
  const mapBox = h('div', { class: 'config-map', 'data-testid': 'geofence-map' });
  const newButton = h('button', { type: 'button', 'data-testid': 'new-geofence' }, t('config.geofences.new'));

  // ---- the editor form ----
  const errors = new FormErrors();
  const name = textInput('', { required: true, maxlength: 200, autocomplete: 'off' });
  const kind = h('select', {}, ...SHAPE_KINDS.map((k) => h('option', { value: k }, t(`config.geofences.kind.${k}`))));
  const lat = h('input', { type: 'number', step: 'any', min: -90, max: 90, inputmode: 'decimal' });
  const lon = h('input', { type: 'number', step: 'any', min: -180, max: 180, inputmode: 'decimal' });
  const radius = h('input', { type: 'number', step: 1, min: 1, inputmode: 'numeric' });
  const rings = h('textarea', { rows: 5, spellcheck: 'false' });
  const line = h('textarea', { rows: 5, spellcheck: 'false' });
  const width = h('input', { type: 'number', step: 1, min: 1, inputmode: 'numeric' });
  const shared = checkbox(false);
  const circleBox = h('div', { class: 'shape-fields', 'data-kind': 'circle' },
    field(t('config.geofences.centreLat'), lat, errors, 'CircleCentre'),
    field(t('config.geofences.centreLon'), lon, errors, 'CircleCentre'),
    field(t('config.geofences.radius'), radius, errors, 'CircleRadius'));
  const polygonBox = h('div', { class: 'shape-fields', 'data-kind': 'polygon' },
    field(t('config.geofences.rings'), rings, errors, 'PolygonPositions', t('config.geofences.ringsHint')));
  const polylineBox = h('div', { class: 'shape-fields', 'data-kind': 'polyline' },
    field(t('config.geofences.points'), line, errors, 'PolylinePositions', t('config.geofences.pointsHint')),
    field(t('config.geofences.width'), width, errors, 'FenceWidth'));
  const drawButton = h('button', { type: 'button', 'data-testid': 'draw-shape' }, t('config.geofences.draw'));
  const drawHint = h('p', { class: 'hint', role: 'status' });
  const editorHeading = h('h2', { tabindex: -1 });
  const form = h(
    'form',
    { class: 'config-form', 'data-testid': 'geofence-form', novalidate: true, hidden: true, 'aria-labelledby': 'geofence-editor-heading' },
    editorHeading,
    errors.summary,
    field(t('config.geofences.name'), name, errors, 'Name'),
    field(t('config.geofences.type'), kind, errors, 'GeofenceType'),
    h('p', { class: 'hint' }, t('config.geofences.howTo')),
    h('div', { class: 'draw-row' }, drawButton, drawHint),
    circleBox,
    polygonBox,
    polylineBox,
    field(t('config.appliesToSubtenants'), shared, errors, 'AppliesToSubtenants'),
    h('div', { class: 'buttons' },
      h('button', { type: 'submit', 'data-testid': 'save-geofence' }, t('config.save')),
      h('button', { type: 'button', onclick: () => closeEditor() }, t('config.cancel'))),
  );
  editorHeading.id = 'geofence-editor-heading';

  outlet.append(
    h('main', { class: 'config-page' },
      h('h1', {}, t('config.geofences.heading')),
      sectionNav('/config/geofences'),
      status,
      h('div', { class: 'config-grid' },
        h('div', {}, manage ? newButton : h('p', { class: 'hint' }, t('config.readOnly')), table, form),
        mapBox)),
  );

  const map = baseMap(mapBox);
  map.pm.setGlobalOptions({ snappable: false });
  // Geoman's vertex and centre handles are mouse-only (the form's fields are the keyboard's
  // way to the same coordinates): out of the tab order and the accessibility tree rather
  // than unnamed buttons that do nothing from the keyboard.
  map.on('layeradd', (e) => {
    const handle = e.layer instanceof L.Marker ? e.layer.getElement() : undefined;
    if (!handle) return;
    handle.removeAttribute('role');
    handle.removeAttribute('tabindex');
    handle.setAttribute('aria-hidden', 'true');
  });
  const others = L.layerGroup().addTo(map);
  let list: Geofence[] = [];
  let editing: Geofence | null = null;
  let edited: L.Path | null = null;

  const showKind = (): void => {
    for (const box of [circleBox, polygonBox, polylineBox]) box.hidden = box.dataset.kind !== kind.value;
  };

  /** The shape the form's fields describe, when they describe one. */
  const formShape = (): Shape | null => {
    switch (kind.value as ShapeKind) {
      case 'circle': {
        if (lat.value === '' || lon.value === '' || radius.value === '') return null;
        const c = { Lat: Number(lat.value), Lon: Number(lon.value) };
        const r = Number(radius.value);
        return Number.isFinite(c.Lat) && Number.isFinite(c.Lon) && r > 0 ? { kind: 'circle', centre: c, radius: r } : null;
      }
      case 'polygon': {
        const read = parseRings(rings.value);
        return 'rings' in read && read.rings.length ? { kind: 'polygon', rings: read.rings } : null;
      }
      case 'polyline': {
        const read = parsePositions(line.value);
        return 'points' in read && read.points.length ? { kind: 'polyline', points: read.points } : null;
      }
      default:
        return null;
    }
  };

  const fillForm = (shape: Shape): void => {
    kind.value = shape.kind;
    showKind();
    if (shape.kind === 'circle') {
      lat.value = String(shape.centre.Lat);
      lon.value = String(shape.centre.Lon);
      radius.value = String(Math.round(shape.radius));
    } else if (shape.kind === 'polygon') {
      rings.value = formatRings(shape.rings);
    } else {
      line.value = formatPositions(shape.points);
    }
  };

  const adopt = (layer: L.Path | null): void => {
    if (edited && edited !== layer) edited.remove();
    edited = layer;
    if (!layer) return;
    layer.setStyle(EDITED);
    if (!layer.pm || !manage) return;
    layer.pm.enable({ snappable: false, allowSelfIntersection: true });
    const sync = (): void => {
      const shape = layerShape(layer);
      if (shape) fillForm(shape);
    };
    layer.on('pm:edit', sync);
    layer.on('pm:dragend', sync);
  };

  const drawFromForm = (): void => {
    const shape = formShape();
    if (!shape) {
      adopt(null);
      return;
    }
    adopt(shapeLayer(shape, EDITED).addTo(map));
  };

  map.on('pm:create', (e) => {
    map.pm.disableDraw();
    drawHint.textContent = '';
    const layer = e.layer as L.Path;
    const shape = layerShape(layer);
    if (shape) fillForm(shape);
    adopt(layer);
  });

  drawButton.addEventListener('click', () => {
    const mode = DRAW_MODE[kind.value as ShapeKind];
    map.pm.disableDraw();
    map.pm.enableDraw(mode, { snappable: false, tooltips: false, continueDrawing: false, pathOptions: EDITED });
    drawHint.textContent = t(`config.geofences.drawHint.${kind.value as ShapeKind}`);
    mapBox.scrollIntoView({ block: 'nearest' });
  });
  kind.addEventListener('change', () => {
    showKind();
    drawFromForm();
  });
  for (const input of [lat, lon, radius, rings, line]) {
    input.addEventListener('change', () => {
      drawFromForm();
      // Typed coordinates may be anywhere: bring them into view (only when out of it:
      // a zoom change redraws the whole world outline).
      const bounds = edited ? (edited as L.Polyline).getBounds() : null;
      if (bounds?.isValid() && !map.getBounds().contains(bounds)) map.fitBounds(bounds, { maxZoom: 15 });
    });
  }

  const showOthers = (): void => {
    others.clearLayers();
    for (const g of list) {
      if (editing && g.GeofenceId === editing.GeofenceId) continue;
      const shape = geofenceShape(g);
      if (!shape) continue;
      const layer = shapeLayer(shape, { ...OTHERS, interactive: false, pmIgnore: true } as L.PathOptions);
      layer.bindTooltip(h('span', {}, g.Name ?? ''), { sticky: true });
      others.addLayer(layer);
    }
  };

  const openEditor = (g: Geofence | null): void => {
    editing = g;
    errors.clear();
    form.hidden = false;
    editorHeading.textContent = g ? t('config.geofences.editing', { name: g.Name ?? '' }) : t('config.geofences.new');
    name.value = g?.Name ?? '';
    shared.checked = !!g?.AppliesToSubtenants;
    width.value = g?.FenceWidth ? String(g.FenceWidth) : '';
    lat.value = lon.value = radius.value = rings.value = line.value = '';
    const shape = g ? geofenceShape(g) : null;
    if (shape) fillForm(shape);
    else {
      kind.value = 'circle';
      showKind();
    }
    drawFromForm();
    if (edited && shape) map.fitBounds((edited as L.Polyline).getBounds(), { maxZoom: 15 });
    showOthers();
    editorHeading.focus();
  };

  function closeEditor(): void {
    map.pm.disableDraw();
    drawHint.textContent = '';
    editing = null;
    adopt(null);
    form.hidden = true;
    showOthers();
  }

  /** The record the form describes (the shape from the fields, which the map keeps in step). */
  const record = (): Geofence => {
    const shape = formShape();
    const kindFields: Partial<Geofence> = shape
      ? shapeFields(shape)
      : { GeofenceType: kind.value, CircleCentre: null, CircleRadius: null, PolygonPositions: null, PolylinePositions: null };
    if (!shape && kind.value === 'circle' && (lat.value || lon.value || radius.value)) {
      // Half a circle is still sent, so the API names what is missing.
      kindFields.CircleCentre = lat.value && lon.value ? { Lat: Number(lat.value), Lon: Number(lon.value) } : null;
      kindFields.CircleRadius = radius.value === '' ? null : Number(radius.value);
    }
    return {
      ...(editing ?? {}),
      GeofenceId: undefined,
      Timestamp: undefined,
      Name: name.value,
      AppliesToSubtenants: shared.checked,
      ...kindFields,
      FenceWidth: kind.value === 'polyline' && width.value !== '' ? Number(width.value) : null,
    };
  };

  const showOnShape = (error: unknown): void => {
    if (!edited) return;
    edited.unbindTooltip();
    const texts = fieldMessages((error as { problem?: never })?.problem)
      .filter((m) => SHAPE_FIELDS.some((f) => m.field === f || m.field.startsWith(`${f}[`)))
      .map((m) => m.message);
    if (texts.length) edited.bindTooltip(h('span', {}, texts.join(' · ')), { permanent: true, className: 'shape-error', direction: 'bottom' }).openTooltip();
  };

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    errors.clear();
    edited?.unbindTooltip();
    for (const [area, text] of [[rings, rings.value], [line, line.value]] as const) {
      if (area.closest('[hidden]')) continue;
      const read = area === rings ? parseRings(text) : parsePositions(text);
      if ('badLine' in read) {
        errors.summary.replaceChildren(t('config.geofences.badLine', { line: read.badLine }));
        area.setAttribute('aria-invalid', 'true');
        area.focus();
        return;
      }
    }
    const body = record();
    const saving = editing?.GeofenceId
      ? api.request('PUT', v2(tc, 'geofences', editing.GeofenceId), body)
      : api.post(v2(tc, 'geofences'), body);
    void saving
      .then(async () => {
        status.textContent = t('config.saved', { name: body.Name ?? '' });
        closeEditor();
        await load();
      })
      .catch((error: unknown) => {
        errors.show(error);
        showOnShape(error);
        (form.querySelector('[aria-invalid=true]') as HTMLElement | null)?.focus();
      });
  });

  const remove = async (g: Geofence): Promise<void> => {
    if (!g.GeofenceId || !confirm(t('config.confirmDelete', { name: g.Name ?? '' }))) return;
    try {
      await api.delete(v2(tc, 'geofences', g.GeofenceId));
      status.textContent = t('config.deleted', { name: g.Name ?? '' });
      if (editing?.GeofenceId === g.GeofenceId) closeEditor();
      await load();
    } catch (error) {
      status.textContent = describeFailure(error);
    }
  };

  const render = (): void => {
    replaceRows(
      rows,
      list.map((g) =>
        h('tr', { 'data-geofence': g.GeofenceId ?? '' },
          h('td', {}, g.Name ?? ''),
          h('td', { 'data-label': t('config.geofences.type') }, SHAPE_KINDS.includes(g.GeofenceType as ShapeKind) ? t(`config.geofences.kind.${g.GeofenceType as ShapeKind}`) : g.GeofenceType ?? ''),
          h('td', { 'data-label': t('config.appliesToSubtenants') }, g.AppliesToSubtenants ? t('config.yes') : t('config.no')),
          h('td', { class: 'row-actions' },
            h('button', { type: 'button', onclick: () => openEditor(g), 'aria-label': t(manage ? 'config.editNamed' : 'config.showNamed', { name: g.Name ?? '' }) }, manage ? t('config.edit') : t('config.show')),
            manage ? h('button', { type: 'button', onclick: () => void remove(g), 'aria-label': t('config.deleteNamed', { name: g.Name ?? '' }) }, t('config.delete')) : null)),
      ),
      'data-geofence',
    );
    if (!list.length) rows.append(h('tr', {}, h('td', { colspan: 4 }, t('config.geofences.empty'))));
    showOthers();
  };

  let fitted = false;
  const load = async (): Promise<void> => {
    try {
      list = await api.get<Geofence[]>(v2(tc, 'geofences'));
      render();
      // The first read shows the geofences (at world zoom they were too small to see).
      if (!fitted && !editing) {
        fitted = true;
        const bounds = L.featureGroup(others.getLayers()).getBounds();
        if (bounds.isValid()) map.fitBounds(bounds, { padding: [24, 24], maxZoom: 13 });
      }
    } catch (error) {
      status.textContent = describeFailure(error);
    }
  };

  newButton.addEventListener('click', () => openEditor(null));
  if (!manage) {
    // Read-only: the form shows a geofence's fields, nothing can be sent.
    form.querySelectorAll<HTMLElement>('input, select, textarea, button[type=submit]').forEach((c) => c.setAttribute('disabled', ''));
    drawButton.hidden = true;
  }
  showKind();
  void load();
  return () => {
    map.pm.disableDraw();
    removeMap(map);
  };
}
