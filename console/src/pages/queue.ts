// The alert queue: Open and Acknowledged alerts in scope, severity then age, ages ticking,
// kept current from the stream.
import { h } from '../dom';
import { t } from '../i18n';
import { formatAge } from '../format';
import { alertKey, severityName, type Alert } from '../alerts';
import * as live from '../live';

export function alertPath(a: Alert): string {
  return `/alerts/${encodeURIComponent(a.TenantCode ?? '')}/${encodeURIComponent(a.AlertId)}`;
}

export function queuePage(outlet: HTMLElement): () => void {
  const body = h('tbody');
  const count = h('p', { class: 'count', 'aria-live': 'polite', 'data-testid': 'queue-count' });
  const table = h(
    'table',
    { class: 'queue', 'data-testid': 'queue' },
    h('caption', { class: 'visually-hidden' }, t('queue.heading')),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...(['severity', 'device', 'user', 'notification', 'age', 'escalation', 'status', 'acknowledgedBy'] as const).map((c) =>
          h('th', { scope: 'col' }, t(`queue.col.${c}`)),
        ),
      ),
    ),
    body,
  );
  const empty = h('p', { class: 'empty', 'data-testid': 'queue-empty' }, t('queue.empty'));
  outlet.append(h('main', { class: 'queue-page' }, h('h1', {}, t('queue.heading')), count, table, empty));

  // Rows are kept while their alert's record is the same, and the table is only touched
  // where it changed: a redraw never pulls a row from under a pointer or the focus.
  const rows = new Map<string, { alert: Alert; tr: HTMLElement; age: HTMLElement }>();
  const draw = (): void => {
    const queue = live.alerts.queue();
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

function row(a: Alert): { tr: HTMLElement; age: HTMLElement } {
  const tc = a.TenantCode ?? '';
  const known = a.DeviceId ? live.devices.get(live.deviceKey(tc, a.DeviceId)) : undefined;
  const link = h('a', { href: alertPath(a), 'data-link': true }, known?.FriendlyName || a.DeviceId || a.AlertId);
  const userCell = h('td');
  if (a.DeviceId) {
    void live.device(tc, a.DeviceId).then(async (d) => {
      if (!d) return;
      if (d.FriendlyName && link.textContent !== d.FriendlyName) link.textContent = d.FriendlyName;
      if (d.UserId) userCell.textContent = live.userName(await live.user(tc, d.UserId));
    });
  }
  const age = h('td', { class: 'age' }, formatAge(a.RaisedAt, Date.now()));
  const tr = h(
    'tr',
    {
      class: `severity-${severityName(a.Severity)} status-${a.Status ?? ''}`,
      'data-alert': alertKey(a),
      'data-alert-id': a.AlertId,
      'data-device': a.DeviceId ?? '',
    },
    h('td', {}, h('span', { class: `badge severity-${severityName(a.Severity)}` }, t(`severity.${severityName(a.Severity)}`))),
    h('td', {}, link),
    userCell,
    h('td', {}, a.NotificationName ?? ''),
    age,
    h('td', {}, String(a.EscalationLevel ?? 0)),
    h('td', {}, a.Status ? t(`status.${a.Status}` as 'status.Open') : ''),
    h('td', { 'data-testid': 'acknowledged-by' }, a.AcknowledgedBy ?? ''),
  );
  return { tr, age };
}
