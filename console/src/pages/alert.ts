// An alert's page: what the worker sent, where they are (copy, open in maps), whose
// device and whom to call (alert-people.ts), what happened so far, and the actions its
// status allows (`actionsFor`): acknowledge while Open, resolve with an outcome chosen
// (none preselected) until resolved, a note or a one-click log entry always. A refused
// action says who acted (the caller themself: "already … by you"). Other consoles'
// actions arrive from the stream and are shown at once.
import L from 'leaflet';
import { api, ApiError, ConflictError, NotFoundError, v2, type Schemas } from '../api';
import { h } from '../dom';
import { t, type Key } from '../i18n';
import { formatAge, formatDateTime, formatNumber } from '../format';
import { actionsFor, alertKey, conflictOf, LOG_ENTRIES, mapsLink, severityName, type Alert } from '../alerts';
import { peopleOf, sentBy } from './alert-people';
import { escalationBox } from './alert-escalation';
import { monitoringBox } from './alert-monitoring';
import { POLL_MS } from './monitoring';
import { escalationWords } from './queue';
import { baseMap, removeMap } from '../map';
import { Track, trackAround, type TrackPoint } from '../track';
import * as live from '../live';
import { session } from '../session';
import { may } from '../roles';

/** An alert's timeline entry, as the API's document describes it. */
type TimelineEntry = Schemas['TimelineEntry'];

const OUTCOMES = ['Genuine', 'FalseAlarm', 'Test', 'Other'] as const;

export function alertPage(outlet: HTMLElement, params: Record<string, string>): () => void {
  const tc = params.tenant ?? '';
  const id = params.id ?? '';
  const base = v2(tc, 'alerts', id);
  const summary = h('dl', { class: 'summary', 'data-testid': 'alert-summary' });
  const sent = h('dl', { class: 'sent', 'data-testid': 'alert-sent' });
  const people = h('dl', { class: 'people', 'data-testid': 'alert-people' });
  const where = h('div', { class: 'where', 'data-testid': 'alert-where' });
  const timeline = h('ol', { class: 'timeline', 'data-testid': 'timeline' });
  const status = h('p', { class: 'action-result', role: 'status', tabindex: -1, 'data-testid': 'action-result' });
  const mapBox = h('div', { class: 'alert-map', 'data-testid': 'alert-map' });
  const heading = h('h1', { tabindex: -1 }, t('alert.heading', { id }));
  const escalation = escalationBox();
  // The device's current monitoring session, if any (DESIGN §11).
  const monitoring = monitoringBox();
  let alert: Alert | null = null;
  let map: L.Map | null = null;
  let marker: L.CircleMarker | null = null;
  let track: Track | null = null;

  const note = h('textarea', { id: 'ack-note', rows: 2, maxlength: 4000 });
  const ackButton = h('button', { type: 'submit' }, t('alert.acknowledge'));
  const ackForm = h('form', { class: 'ack', 'data-testid': 'ack-form' }, h('label', { for: 'ack-note' }, t('alert.note')), note, ackButton);
  const noteText = h('textarea', { id: 'note-text', rows: 2, maxlength: 4000, required: true });
  const noteForm = h('form', { class: 'note', 'data-testid': 'note-form' }, h('label', { for: 'note-text' }, t('alert.note')), noteText, h('button', { type: 'submit' }, t('alert.addNote')));
  // No outcome is chosen for the operator: the empty first option, and `required`.
  const outcome = h(
    'select',
    { id: 'outcome', required: true },
    h('option', { value: '', selected: true }, t('duty.chooseOutcome')),
    ...OUTCOMES.map((o) => h('option', { value: o }, t(`outcome.${o}`))),
  );
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
  // One click, one note on the timeline: what an operator does again and again at night.
  const logButtons = LOG_ENTRIES.map((k) => h('button', { type: 'button', 'data-log': k }, t(`duty.log.${k}`)));
  const logBox = h(
    'div',
    { class: 'log-entries', role: 'group', 'aria-labelledby': 'log-h', 'data-testid': 'log-entries' },
    h('h3', { id: 'log-h' }, t('duty.logHeading')),
    ...logButtons,
  );

  const trackNote = h('p', { class: 'track-note', 'data-testid': 'track-note' });
  // Reading order: what happened and what was sent, whom to call, then the actions, then
  // the map (a keyboard reaches the actions without crossing the map's controls); on a
  // wide screen the map stands beside.
  outlet.append(
    h(
      'main',
      { class: 'alert-page' },
      h('p', {}, h('a', { href: '/alerts', 'data-link': true }, t('alert.back'))),
      heading,
      h('div', { class: 'alert-grid' },
        h('div', { class: 'alert-info' },
          // The response procedure first: what the operator does now.
          escalation.element,
          h('section', {}, summary),
          monitoring.element,
          h('section', { 'aria-labelledby': 'sent-h' }, h('h2', { id: 'sent-h' }, t('duty.sentHeading')), sent, where),
          // Acknowledge, notes and resolve need HandleAlerts: not offered without it.
          may(session(), 'HandleAlerts') &&
            h('section', { class: 'actions', 'aria-labelledby': 'actions-h' }, h('h2', { id: 'actions-h' }, t('alert.actions')), status, ackForm, logBox, noteForm, resolveForm),
          h('section', { 'aria-labelledby': 'people-h' }, h('h2', { id: 'people-h' }, t('duty.peopleHeading')), people),
        ),
        h('section', { class: 'alert-where', 'aria-label': t('alert.position') }, mapBox, trackNote),
      ),
      h('section', { 'aria-labelledby': 'timeline-h' }, h('h2', { id: 'timeline-h' }, t('alert.timeline')), timeline),
    ),
  );

  /** The position as numbers, with Copy and Open in maps. */
  let whereShown: string | null = null;
  const showWhere = (a: Alert): void => {
    // Redrawn only when the position moved (never from under the pointer or the focus).
    const key = `${a.Latitude},${a.Longitude}`;
    if (key === whereShown) return;
    whereShown = key;
    if (a.Latitude == null || a.Longitude == null) {
      where.replaceChildren(h('p', {}, t('alert.noPosition')));
      return;
    }
    const text = `${a.Latitude.toFixed(6)}, ${a.Longitude.toFixed(6)}`;
    const field = h('input', { type: 'text', readonly: true, value: text, id: 'alert-coordinates', 'data-testid': 'coordinates', size: 24 });
    const copied = h('span', { class: 'copied', role: 'status' });
    const copy = h('button', { type: 'button', 'data-testid': 'copy-position' }, t('duty.copy'));
    copy.addEventListener('click', () => {
      const done = (): void => void (copied.textContent = t('duty.copied'));
      const fallback = (): void => {
        field.select();
        // The clipboard API needs a secure context; the selection is copied the old way.
        if (document.execCommand('copy')) done();
      };
      if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, fallback);
      else fallback();
    });
    where.replaceChildren(
      h('label', { for: 'alert-coordinates' }, t('alert.position')),
      ' ',
      field,
      ' ',
      copy,
      ' ',
      h('a', { href: mapsLink(a.Latitude, a.Longitude), target: '_blank', rel: 'noopener noreferrer', 'data-testid': 'open-in-maps' }, t('duty.openInMaps')),
      ' ',
      copied,
    );
  };

  let closed = false;
  const showAlert = (a: Alert): void => {
    if (closed) return;
    alert = a;
    const acked = a.AcknowledgedBy ? `${a.AcknowledgedBy}${a.AcknowledgedAt ? ` (${formatDateTime(a.AcknowledgedAt)})` : ''}` : t('alert.none');
    const rows: [Key, string | Node][] = [
      ['queue.col.severity', t(`severity.${severityName(a.Severity)}`)],
      ['queue.col.status', a.Status ? t(`status.${a.Status}` as 'status.Open') : ''],
      ['queue.col.notification', a.NotificationName ?? ''],
      ['alert.raised', `${formatDateTime(a.RaisedAt)} (${formatAge(a.RaisedAt, Date.now())})`],
      ['queue.col.acknowledgedBy', acked],
      ['alert.position', a.Latitude != null && a.Longitude != null ? `${formatNumber(a.Latitude)}, ${formatNumber(a.Longitude)}` : t('alert.noPosition')],
    ];
    if ((a.EscalationLevel ?? 0) > 0) rows.splice(4, 0, ['queue.col.escalation', escalationWords(a.EscalationLevel)]);
    if ((a.MatchCount ?? 1) > 1) rows.push(['duty.matches', t('duty.matchCount', { n: a.MatchCount ?? 1, last: formatDateTime(a.LastMatchAt) })]);
    if (a.Late) rows.push(['duty.late', t('duty.lateShort')]);
    summary.replaceChildren(...rows.flatMap(([k, v]) => [h('dt', {}, t(k)), h('dd', { 'data-field': k }, v)]));
    summary.dataset.status = a.Status ?? '';
    summary.dataset.late = String(!!a.Late);
    escalation.show(a);
    const allowed = actionsFor(a.Status);
    ackForm.hidden = !allowed.acknowledge;
    resolveForm.hidden = !allowed.resolve;
    noteForm.hidden = !allowed.note;
    logBox.hidden = !allowed.note;
    showWhere(a);
    if (a.Latitude != null && a.Longitude != null) {
      const at: L.LatLngExpression = [a.Latitude, a.Longitude];
      map ??= baseMap(mapBox, at, 12);
      // The legend's emergency colour (the stylesheet's), as on the map.
      const colour = getComputedStyle(document.documentElement).getPropertyValue('--high-fill').trim() || '#b00020';
      marker ??= L.circleMarker(at, { radius: 9, color: colour, fillOpacity: 0.8, className: 'alert-position' })
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
      if (first) {
        heading.focus();
        void sentBy(tc, a, sent);
        void peopleOf(tc, a, people);
      }
      if (a.DeviceId) void monitoring.read(tc, a.DeviceId);
      if (!track) void showTrack(a);
      await readTimeline();
    } catch (e) {
      if (e instanceof NotFoundError) heading.textContent = t('alert.notFound');
      else if (e instanceof ApiError) status.textContent = t('error.generic', { detail: e.message });
    }
  };

  /** A refused action: the alert as it now is, and who moved it (the caller themself said so). */
  const conflicted = async (): Promise<void> => {
    const now = await api.get<Alert>(base).catch(() => alert);
    if (now) {
      showAlert(now);
      const c = conflictOf(now, session()?.Username);
      const what = c.status ? t(`status.${c.status}` as 'status.Open') : '';
      const at = c.at ? formatDateTime(c.at) : '';
      status.textContent = c.mine
        ? t('duty.conflictMine', { status: what.toLowerCase(), at })
        : c.by
          ? t('duty.conflictOther', { status: what.toLowerCase(), who: c.by, at })
          : t('duty.conflictChanged', { status: what.toLowerCase() });
      status.classList.add('conflict');
      status.dataset.conflict = c.mine ? 'mine' : 'other';
    }
    await readTimeline();
  };

  const send = (path: string, body: unknown, controls: HTMLButtonElement[], after: () => void, done?: string): void => {
    controls.forEach((b) => (b.disabled = true));
    status.textContent = '';
    status.className = 'action-result';
    delete status.dataset.conflict;
    api
      .post<Alert>(`${base}/${path}`, body)
      .then(async (a) => {
        after();
        if (a && a.AlertId) {
          live.alerts.upsert(a);
          showAlert(a);
        }
        if (done) {
          status.textContent = done;
          status.classList.add('ok');
        }
        await readTimeline();
      })
      .catch(async (err: unknown) => {
        if (err instanceof ConflictError) await conflicted();
        else if (err instanceof ApiError) {
          status.textContent = t('alert.failed', { detail: err.message });
          status.classList.add('error');
        }
      })
      .finally(() => controls.forEach((b) => (b.disabled = false)));
  };
  const act = (form: HTMLFormElement, path: string, body: () => unknown, after: () => void): void => {
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      send(path, body(), [...form.querySelectorAll('button')], after);
    });
  };
  act(ackForm, 'acknowledge', () => (note.value.trim() ? { Note: note.value.trim() } : {}), () => (note.value = ''));
  act(noteForm, 'notes', () => ({ Text: noteText.value.trim() }), () => (noteText.value = ''));
  act(resolveForm, 'resolve', () => ({ Outcome: outcome.value, ...(resolution.value.trim() ? { Resolution: resolution.value.trim() } : {}) }), () => {
    resolution.value = '';
    outcome.value = '';
  });
  logButtons.forEach((button) => {
    button.addEventListener('click', () => {
      const text = t(`duty.log.${button.dataset.log as (typeof LOG_ENTRIES)[number]}`);
      send('notes', { Text: text }, logButtons, () => undefined, t('duty.logged', { what: text }));
    });
  });

  void read();
  const key = alertKey({ AlertId: id, TenantCode: tc });
  const offs = [
    live.alertChanged.on((a) => {
      if (alertKey(a) !== key) return;
      showAlert(a);
      void readTimeline();
    }),
    live.resync.on(() => void read()),
    // A `monitoring` event of the alert's device: the panel from its session, no read.
    live.monitoringEvent.on((e) => {
      if (alert?.DeviceId) monitoring.event(e, tc, alert.DeviceId);
    }),
    // The device keeps reporting: its new positions extend the track.
    live.deviceChanged.on((d) => {
      if (!track || !alert || d.DeviceId !== alert.DeviceId || (d.TenantCode && d.TenantCode !== tc)) return;
      const p = d.LastPosition;
      const at = p?.GpsTimestamp ?? d.LastMessageTime;
      if (p && at && track.add({ lat: p.Lat, lon: p.Lon, at })) describeTrack();
    }),
  ];
  const ticker = window.setInterval(() => monitoring.tick(), 1000);
  // The session is kept from the stream; read again every minute only as a safety net
  // (as the board; a gap in the stream is read at once, live.resync above).
  const sessionPoll = window.setInterval(() => {
    if (alert?.DeviceId) void monitoring.read(tc, alert.DeviceId);
  }, POLL_MS);
  return () => {
    closed = true;
    window.clearInterval(ticker);
    window.clearInterval(sessionPoll);
    offs.forEach((off) => off());
    if (map) removeMap(map);
  };
}

function entry(e: TimelineEntry): HTMLElement {
  const kind = `timeline.${e.Kind}` as Key;
  const what = [
    // One collapsed line for every further match: MatchCount counts the raising one too.
    e.Kind === 'Matched' && e.MatchCount && e.MatchCount > 1 ? t('timeline.times', { n: e.MatchCount - 1 }) : null,
    e.Step ? t('timeline.step', { n: e.Step }) : null,
    e.Instructions,
    e.Note,
    e.Text,
    e.Outcome ? t(`outcome.${e.Outcome}` as Key) : null,
    e.Resolution,
    e.Channel && e.Target
      ? `${t(`delivery.channel.${e.Channel}` as Key) || e.Channel} ${e.Target}${e.Status ? ` (${t(`delivery.status.${e.Status}` as Key) || e.Status})` : ''}`
      : null,
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
