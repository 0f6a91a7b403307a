// An alert's page: where it is, whose device, whom to call, what happened so far, and the
// actions. Other consoles' actions arrive from the stream and are shown at once.
import L from 'leaflet';
import { api, ApiError, ConflictError, NotFoundError, v2 } from '../api';
import { h } from '../dom';
import { t, type Key } from '../i18n';
import { formatDateTime, formatNumber } from '../format';
import { alertKey, severityName, type Alert } from '../alerts';
import { baseMap, removeMap } from '../map';
import { Track, trackAround, type TrackPoint } from '../track';
import * as live from '../live';
import { session } from '../session';
import { may } from '../roles';

interface TimelineEntry {
  Kind: string;
  At: string;
  By?: string | null;
  Note?: string | null;
  Text?: string | null;
  Resolution?: string | null;
  Outcome?: string | null;
  Channel?: string | null;
  Target?: string | null;
  Status?: string | null;
  Round?: number | null;
}

interface Profile {
  DaytimePhone?: string | null;
  EveningPhone?: string | null;
  CellPhone?: string | null;
  EmergencyContactName?: string | null;
  EmergencyContactAddress?: string | null;
  EmergencyContactTelephoneNumber?: string | null;
  EmergencyInformation?: string | null;
}

const OUTCOMES = ['Genuine', 'FalseAlarm', 'Test', 'Other'] as const;

export function alertPage(outlet: HTMLElement, params: Record<string, string>): () => void {
  const tc = params.tenant ?? '';
  const id = params.id ?? '';
  const base = v2(tc, 'alerts', id);
  const summary = h('dl', { class: 'summary', 'data-testid': 'alert-summary' });
  const people = h('dl', { class: 'people' });
  const timeline = h('ol', { class: 'timeline', 'data-testid': 'timeline' });
  const status = h('p', { class: 'action-result', role: 'status', tabindex: -1, 'data-testid': 'action-result' });
  const mapBox = h('div', { class: 'alert-map', 'data-testid': 'alert-map' });
  const heading = h('h1', { tabindex: -1 }, t('alert.heading', { id }));
  let alert: Alert | null = null;
  let map: L.Map | null = null;
  let marker: L.CircleMarker | null = null;
  let track: Track | null = null;

  const note = h('textarea', { id: 'ack-note', rows: 2, maxlength: 4000 });
  const ackButton = h('button', { type: 'submit' }, t('alert.acknowledge'));
  const ackForm = h('form', { class: 'ack', 'data-testid': 'ack-form' }, h('label', { for: 'ack-note' }, t('alert.note')), note, ackButton);
  const noteText = h('textarea', { id: 'note-text', rows: 2, maxlength: 4000, required: true });
  const noteForm = h('form', { class: 'note', 'data-testid': 'note-form' }, h('label', { for: 'note-text' }, t('alert.note')), noteText, h('button', { type: 'submit' }, t('alert.addNote')));
  const outcome = h('select', { id: 'outcome', required: true }, ...OUTCOMES.map((o) => h('option', { value: o }, t(`outcome.${o}`))));
  const resolution = h('textarea', { id: 'resolution', rows: 2, maxlength: 4000 });
  const resolveForm = h(
    'form',
    { class: 'resolve', 'data-testid': 'resolve-form' },
    h('label', { for: 'outcome' }, t('alert.outcome')),
    outcome,
    h('label', { for: 'resolution' }, t('alert.resolution')),
    resolution,
    h('button', { type: 'submit' }, t('alert.resolve')),
  );

  const trackNote = h('p', { class: 'track-note', 'data-testid': 'track-note' });
  // Reading order: what happened, then the actions, then the map (a keyboard reaches the
  // actions without crossing the map's controls); on a wide screen the map stands beside.
  outlet.append(
    h(
      'main',
      { class: 'alert-page' },
      h('p', {}, h('a', { href: '/alerts', 'data-link': true }, t('alert.back'))),
      heading,
      h('div', { class: 'alert-grid' },
        h('div', { class: 'alert-info' },
          h('section', {}, summary, people),
          // Acknowledge, notes and resolve need HandleAlerts: not offered without it.
          may(session(), 'HandleAlerts') &&
            h('section', { class: 'actions', 'aria-labelledby': 'actions-h' }, h('h2', { id: 'actions-h' }, t('alert.actions')), status, ackForm, noteForm, resolveForm),
        ),
        h('section', { class: 'alert-where', 'aria-label': t('alert.position') }, mapBox, trackNote),
      ),
      h('section', { 'aria-labelledby': 'timeline-h' }, h('h2', { id: 'timeline-h' }, t('alert.timeline')), timeline),
    ),
  );

  let closed = false;
  const showAlert = (a: Alert): void => {
    if (closed) return;
    alert = a;
    const rows: [Key, string | Node][] = [
      ['queue.col.severity', t(`severity.${severityName(a.Severity)}`)],
      ['queue.col.status', a.Status ? t(`status.${a.Status}` as 'status.Open') : ''],
      ['queue.col.notification', a.NotificationName ?? ''],
      ['alert.raised', formatDateTime(a.RaisedAt)],
      ['queue.col.escalation', String(a.EscalationLevel ?? 0)],
      ['queue.col.acknowledgedBy', a.AcknowledgedBy ?? t('alert.none')],
      ['alert.position', a.Latitude != null && a.Longitude != null ? `${formatNumber(a.Latitude)}, ${formatNumber(a.Longitude)}` : t('alert.noPosition')],
    ];
    summary.replaceChildren(...rows.flatMap(([k, v]) => [h('dt', {}, t(k)), h('dd', { 'data-field': k }, v)]));
    summary.dataset.status = a.Status ?? '';
    ackForm.hidden = a.Status !== 'Open';
    resolveForm.hidden = a.Status === 'Resolved';
    noteForm.hidden = false;
    if (a.Latitude != null && a.Longitude != null) {
      const at: L.LatLngExpression = [a.Latitude, a.Longitude];
      map ??= baseMap(mapBox, at, 12);
      marker ??= L.circleMarker(at, { radius: 9, color: '#b00020', fillOpacity: 0.8, className: 'alert-position' })
        .bindTooltip(h('span', {}, t('alert.here')))
        .addTo(map);
      marker.setLatLng(at);
    } else if (!map) {
      mapBox.textContent = t('alert.noPosition');
    }
    // Focus was on a control this change hid (Acknowledge): the result takes it.
    const focused = document.activeElement;
    if (focused && focused !== document.body && (focused as HTMLElement).closest('form[hidden]')) status.focus();
  };

  /** The device's positions in the hour either side of the alert, as a line on the map. */
  const showTrack = async (a: Alert): Promise<void> => {
    if (!a.DeviceId || !a.RaisedAt || closed) return;
    const points = await trackAround(tc, a.DeviceId, Date.parse(a.RaisedAt)).catch(() => [] as TrackPoint[]);
    if (closed) return;
    if (!map) {
      const first = points[0];
      if (!first) return;
      mapBox.textContent = '';
      map = baseMap(mapBox, [first.lat, first.lon], 12);
    }
    track = new Track(map, points, marker?.getLatLng());
    describeTrack();
  };
  const describeTrack = (): void => {
    const points = track?.points ?? [];
    const first = points[0];
    const last = points[points.length - 1];
    trackNote.textContent =
      first && last && points.length > 1
        ? t('alert.track', { n: points.length, from: formatDateTime(first.at), to: formatDateTime(last.at) })
        : t('alert.trackNone');
    mapBox.dataset.track = String(points.length);
  };

  const showPeople = async (a: Alert): Promise<void> => {
    if (!a.DeviceId) return;
    const d = await live.device(tc, a.DeviceId);
    const entries: [Key, string][] = [['alert.device', d?.FriendlyName ? `${d.FriendlyName} (${a.DeviceId})` : a.DeviceId]];
    if (d?.UserId) {
      const u = await live.user(tc, d.UserId);
      entries.push(['alert.user', live.userName(u) || d.UserId]);
      const p = await api.get<Profile>(v2(tc, 'userprofile', d.UserId)).catch(() => null);
      if (p) {
        entries.push(['alert.phones', [p.CellPhone, p.DaytimePhone, p.EveningPhone].filter(Boolean).join(', ') || t('alert.none')]);
        entries.push(['alert.emergencyContact', [p.EmergencyContactName, p.EmergencyContactTelephoneNumber, p.EmergencyContactAddress].filter(Boolean).join(' · ') || t('alert.none')]);
        entries.push(['alert.emergencyInformation', p.EmergencyInformation || t('alert.none')]);
      }
    }
    people.replaceChildren(...entries.flatMap(([k, v]) => [h('dt', {}, t(k)), h('dd', {}, v)]));
  };

  const readTimeline = async (): Promise<void> => {
    const entries = await api.get<TimelineEntry[]>(`${base}/timeline`).catch(() => [] as TimelineEntry[]);
    timeline.replaceChildren(
      ...(entries.length === 0 ? [h('li', {}, t('alert.timelineEmpty'))] : entries.map(entry)),
    );
  };

  const read = async (): Promise<void> => {
    try {
      const a = await api.get<Alert>(base);
      const first = alert === null;
      showAlert(a);
      if (first) heading.focus();
      void showPeople(a);
      if (!track) void showTrack(a);
      await readTimeline();
    } catch (e) {
      if (e instanceof NotFoundError) heading.textContent = t('alert.notFound');
      else if (e instanceof ApiError) status.textContent = t('error.generic', { detail: e.message });
    }
  };

  const act = (form: HTMLFormElement, path: string, body: () => unknown, after: () => void): void => {
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const buttons = form.querySelectorAll('button');
      buttons.forEach((b) => (b.disabled = true));
      status.textContent = '';
      status.className = 'action-result';
      api
        .post<Alert>(`${base}/${path}`, body())
        .then(async (a) => {
          after();
          if (a && a.AlertId) {
            live.alerts.upsert(a);
            showAlert(a);
          }
          await readTimeline();
        })
        .catch(async (err: unknown) => {
          if (err instanceof ConflictError) {
            // Someone else acted first: say what happened and show the alert as it is now.
            const now = await api.get<Alert>(base).catch(() => alert);
            if (now) {
              showAlert(now);
              const who = now.Status === 'Resolved' ? now.ResolvedBy : now.AcknowledgedBy;
              status.textContent = t('alert.conflict', {
                status: now.Status ? t(`status.${now.Status}` as 'status.Open') : '',
                by: who ? t('alert.conflictBy', { who }) : '',
              });
              status.classList.add('conflict');
            }
            await readTimeline();
          } else if (err instanceof ApiError) {
            status.textContent = t('alert.failed', { detail: err.message });
            status.classList.add('error');
          }
        })
        .finally(() => buttons.forEach((b) => (b.disabled = false)));
    });
  };
  act(ackForm, 'acknowledge', () => (note.value.trim() ? { Note: note.value.trim() } : {}), () => (note.value = ''));
  act(noteForm, 'notes', () => ({ Text: noteText.value.trim() }), () => (noteText.value = ''));
  act(resolveForm, 'resolve', () => ({ Outcome: outcome.value, ...(resolution.value.trim() ? { Resolution: resolution.value.trim() } : {}) }), () => (resolution.value = ''));

  void read();
  const key = alertKey({ AlertId: id, TenantCode: tc });
  const offs = [
    live.alertChanged.on((a) => {
      if (alertKey(a) !== key) return;
      showAlert(a);
      void readTimeline();
    }),
    live.resync.on(() => void read()),
    // The device keeps reporting: its new positions extend the track.
    live.deviceChanged.on((d) => {
      if (!track || !alert || d.DeviceId !== alert.DeviceId || (d.TenantCode && d.TenantCode !== tc)) return;
      const p = d.LastPosition;
      const at = p?.GpsTimestamp ?? d.LastMessageTime;
      if (p && at && track.add({ lat: p.Lat, lon: p.Lon, at })) describeTrack();
    }),
  ];
  return () => {
    closed = true;
    offs.forEach((off) => off());
    if (map) removeMap(map);
  };
}

function entry(e: TimelineEntry): HTMLElement {
  const kind = `timeline.${e.Kind}` as Key;
  const what = [
    e.Note,
    e.Text,
    e.Outcome ? t(`outcome.${e.Outcome}` as Key) : null,
    e.Resolution,
    e.Channel && e.Target ? `${e.Channel} ${e.Target}${e.Status ? ` (${e.Status})` : ''}` : null,
  ].filter(Boolean);
  return h(
    'li',
    { 'data-kind': e.Kind },
    h('time', { datetime: e.At }, formatDateTime(e.At)),
    ' ',
    h('strong', {}, t(kind) || e.Kind),
    e.By ? ` ${t('timeline.by', { who: e.By })}` : '',
    what.length ? h('span', { class: 'what' }, ` — ${what.join(' · ')}`) : '',
  );
}
