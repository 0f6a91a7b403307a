// The alert queue: Open and Acknowledged alerts in scope — severity, then Open before
// Acknowledged, then age (oldest first, or newest: a choice kept in this browser) — with
// what was sent, where, whose device, ages ticking, kept current from the stream. At
// phone width each row is a card whose cells carry their column's name (`data-label`).
import { h } from '../dom';
import { t } from '../i18n';
import { formatAge, formatDateTime, formatNumber } from '../format';
import { alertKey, severityName, type Alert, type QueueOrder } from '../alerts';
import * as live from '../live';
import { userLabel, type DeviceRecord } from '../devices';

export function alertPath(a: Pick<Alert, 'AlertId' | 'TenantCode'>): string {
  return `/alerts/${encodeURIComponent(a.TenantCode ?? '')}/${encodeURIComponent(a.AlertId)}`;
}

const ORDER_KEY = 'safetrack.queueOrder';

/** The queue order chosen in this browser (oldest first unless newest was chosen). */
export function queueOrder(): QueueOrder {
  try {
    return localStorage.getItem(ORDER_KEY) === 'newest' ? 'newest' : 'oldest';
  } catch {
    return 'oldest';
  }
}

function keepOrder(order: QueueOrder): void {
  try {
    localStorage.setItem(ORDER_KEY, order);
  } catch {
    // Storage refused (private mode): the choice lasts for this page only.
  }
}

const COLUMNS = ['severity', 'device', 'owner', 'notification', 'message', 'place', 'raised', 'status', 'escalation'] as const;
type Column = (typeof COLUMNS)[number];

function label(c: Column): string {
  return t(`duty.col.${c}`);
}

/** Where the alert was: the geofences' names, else its coordinates. */
export function placeOf(a: Alert): string {
  const fences = (a.Geofences ?? []).filter(Boolean);
  if (fences.length) return fences.join(', ');
  if (a.Latitude != null && a.Longitude != null) return `${formatNumber(a.Latitude)}, ${formatNumber(a.Longitude)}`;
  return t('alert.noPosition');
}

/** Escalation rounds in words, only once there was one. */
export function escalationWords(level: number | null | undefined): string {
  return level && level > 0 ? t('duty.escalated', { n: level }) : '';
}

export function queuePage(outlet: HTMLElement): () => void {
  const body = h('tbody');
  const count = h('p', { class: 'count', 'aria-live': 'polite', 'data-testid': 'queue-count' });
  let order = queueOrder();
  const newest = h('input', { type: 'checkbox', id: 'queue-newest', checked: order === 'newest', 'data-testid': 'queue-newest' });
  const table = h(
    'table',
    { class: 'queue', 'data-testid': 'queue' },
    h('caption', { class: 'visually-hidden' }, t('queue.heading')),
    h('thead', {}, h('tr', {}, ...COLUMNS.map((c) => h('th', { scope: 'col' }, label(c))))),
    body,
  );
  const empty = h('p', { class: 'empty', 'data-testid': 'queue-empty' }, t('queue.empty'));
  outlet.append(
    h(
      'main',
      { class: 'queue-page' },
      h('h1', {}, t('queue.heading')),
      h('div', { class: 'queue-head' }, count, h('label', { class: 'toggle', for: 'queue-newest' }, newest, ' ', t('duty.newestFirst'))),
      table,
      empty,
    ),
  );

  // Rows are kept while their alert's record is the same, and the table is only touched
  // where it changed: a redraw never pulls a row from under a pointer or the focus.
  const rows = new Map<string, { alert: Alert; tr: HTMLElement; age: HTMLElement }>();
  const draw = (): void => {
    const queue = live.alerts.queue(order);
    const wanted: HTMLElement[] = [];
    const keep = new Set<string>();
    const focused = document.activeElement;
    let refocus: HTMLElement | null = null;
    for (const a of queue) {
      const key = alertKey(a);
      keep.add(key);
      let held = rows.get(key);
      if (!held || held.alert !== a) {
        // A changed alert gets a new row; the link the person was on moves with it.
        const hadFocus = !!held && !!focused && held.tr.contains(focused);
        held = { alert: a, ...row(a) };
        rows.set(key, held);
        if (hadFocus) refocus = held.tr;
      }
      wanted.push(held.tr);
    }
    for (const key of rows.keys()) if (!keep.has(key)) rows.delete(key);
    wanted.forEach((tr, i) => {
      const there = body.children[i];
      if (there !== tr) body.insertBefore(tr, there ?? null);
    });
    while (body.children.length > wanted.length) body.lastElementChild?.remove();
    refocus?.querySelector<HTMLElement>('a')?.focus();
    count.textContent = t('queue.count', { n: queue.length });
    empty.hidden = queue.length > 0;
    table.hidden = queue.length === 0;
  };
  const tick = (): void => {
    const now = Date.now();
    for (const { alert, age } of rows.values()) age.textContent = formatAge(alert.RaisedAt, now);
  };
  draw();
  newest.addEventListener('change', () => {
    order = newest.checked ? 'newest' : 'oldest';
    keepOrder(order);
    draw();
  });
  // A burst of alert events redraws the table once, in the next frame.
  let frame = 0;
  const drawSoon = (): void => {
    frame ||= requestAnimationFrame(() => {
      frame = 0;
      draw();
    });
  };
  const offs = [live.alertChanged.on(drawSoon), live.queueReloaded.on(drawSoon)];
  const timer = window.setInterval(tick, 1000);
  return () => {
    offs.forEach((off) => off());
    window.clearInterval(timer);
    if (frame) cancelAnimationFrame(frame);
  };
}

function cell(c: Column, ...content: (Node | string)[]): HTMLElement {
  return h('td', { 'data-label': label(c), 'data-col': c }, ...content);
}

function row(a: Alert): { tr: HTMLElement; age: HTMLElement } {
  const tc = a.TenantCode ?? '';
  const known = a.DeviceId ? live.devices.get(live.deviceKey(tc, a.DeviceId)) : undefined;
  const link = h('a', { href: alertPath(a), 'data-link': true }, known?.FriendlyName || a.DeviceId || a.AlertId);
  const owner = cell('owner');
  if (a.DeviceId) {
    void live.device(tc, a.DeviceId).then(async (d) => {
      if (!d) return;
      if (d.FriendlyName && link.textContent !== d.FriendlyName) link.textContent = d.FriendlyName;
      // The person as the device list read them (AssignedUser), else read by id.
      const named = userLabel(d as DeviceRecord);
      if (named) owner.textContent = named;
      else if (d.UserId) owner.textContent = live.userName(await live.user(tc, d.UserId)) || d.UserId;
    });
  }
  const age = h('span', { class: 'age' }, formatAge(a.RaisedAt, Date.now()));
  // The word, with the badge's shape (style.css) so the status never rests on colour alone.
  const status = a.Status
    ? h('span', { class: 'status-badge', 'data-status': a.Status }, t(`status.${a.Status}` as 'status.Open'))
    : '';
  const tr = h(
    'tr',
    {
      class: `severity-${severityName(a.Severity)} status-${a.Status ?? ''}`,
      'data-alert': alertKey(a),
      'data-alert-id': a.AlertId,
      'data-device': a.DeviceId ?? '',
      'data-status': a.Status ?? '',
    },
    cell('severity', h('span', { class: `badge severity-${severityName(a.Severity)}` }, t(`severity.${severityName(a.Severity)}`))),
    cell('device', link),
    owner,
    cell('notification', a.NotificationName ?? ''),
    cell('message', a.MessageText ?? ''),
    cell('place', placeOf(a)),
    cell('raised', h('time', { datetime: a.RaisedAt ?? '' }, formatDateTime(a.RaisedAt)), ' (', age, ')'),
    cell(
      'status',
      status,
      a.AcknowledgedBy ? h('span', { class: 'by', 'data-testid': 'acknowledged-by' }, ` — ${a.AcknowledgedBy}`) : '',
    ),
    cell('escalation', escalationWords(a.EscalationLevel)),
  );
  return { tr, age };
}
