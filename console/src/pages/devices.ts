// The device list: every device in the working tenant's scope (with subtenants), read in
// one paged listing, searched and filtered in memory, sorted by last report, shown a page
// of rows at a time and kept current from the stream (updates coalesced per frame).
import { api, v2 } from '../api';
import { h, replaceRows } from '../dom';
import { t } from '../i18n';
import { formatAge, formatDateTime } from '../format';
import { tenant } from '../session';
import * as live from '../live';
import type { Alert } from '../alerts';
import { alertPath } from './queue';
import {
  DEVICE_STATES,
  DeviceView,
  deviceState,
  mergeDevice,
  openAlertOf,
  pageBounds,
  userLabel,
  type DeviceFilter,
  type DeviceRecord,
  type DeviceState,
  type Row,
} from '../devices';

/** Rows on one page of the list. */
export const PAGE_SIZE = 50;
/** Devices per API page while reading the scope. */
const READ_PAGE = 2000;
/** Tenants whose group names are looked up (beyond that, groups show their id). */
const GROUP_TENANTS = 100;

export function devicePath(d: { TenantCode?: string | null; DeviceId: string }): string {
  return `/devices/${encodeURIComponent(d.TenantCode ?? '')}/${encodeURIComponent(d.DeviceId)}`;
}

export function stateBadge(state: DeviceState): HTMLElement {
  return h(
    'span',
    { class: 'device-state', 'data-state': state },
    h('span', { class: `swatch state-${state}`, 'aria-hidden': 'true' }),
    t(`devices.state.${state}`),
  );
}

function option(value: string, label: string, selected: boolean): HTMLOptionElement {
  const o = h('option', { value }, label);
  o.selected = selected;
  return o;
}

/** The filter as the address keeps it (so going back to the list finds it as it was). */
function filterFromUrl(): { filter: DeviceFilter; page: number } {
  const q = new URLSearchParams(location.search);
  const state = q.get('state') ?? '';
  return {
    filter: {
      text: q.get('q') ?? '',
      group: q.get('group') ?? '',
      type: q.get('type') ?? '',
      state: (DEVICE_STATES as readonly string[]).includes(state) ? (state as DeviceState) : '',
    },
    page: Math.max(0, Number(q.get('page') ?? '1') - 1) || 0,
  };
}

function filterToUrl(filter: DeviceFilter, page: number): void {
  const q = new URLSearchParams();
  if (filter.text) q.set('q', filter.text);
  if (filter.group) q.set('group', filter.group);
  if (filter.type) q.set('type', filter.type);
  if (filter.state) q.set('state', filter.state);
  if (page > 0) q.set('page', String(page + 1));
  const search = q.toString();
  history.replaceState(history.state, '', location.pathname + (search ? `?${search}` : ''));
}

export function devicesPage(outlet: HTMLElement): () => void {
  const scope = tenant();
  const view = new DeviceView(scope);
  const initial = filterFromUrl();
  let filter = initial.filter;
  let page = initial.page;
  const groupNames = new Map<string, string>();
  view.setFilter(filter, Date.now());

  const search = h('input', { type: 'search', id: 'device-search', autocomplete: 'off', 'data-testid': 'device-search' });
  search.value = filter.text;
  const groupSelect = h('select', { id: 'device-group', 'data-testid': 'device-group' });
  const typeSelect = h('select', { id: 'device-type', 'data-testid': 'device-type' });
  const stateSelect = h(
    'select',
    { id: 'device-state', 'data-testid': 'device-state' },
    option('', t('devices.filter.anyState'), filter.state === ''),
    ...DEVICE_STATES.map((s) => option(s, t(`devices.state.${s}`), filter.state === s)),
  );
  const filters = h(
    'form',
    { class: 'device-filters', role: 'search', 'aria-label': t('devices.filter.label') },
    h('label', { for: 'device-search' }, t('devices.filter.search')),
    search,
    h('label', { for: 'device-group' }, t('devices.filter.group')),
    groupSelect,
    h('label', { for: 'device-type' }, t('devices.filter.type')),
    typeSelect,
    h('label', { for: 'device-state' }, t('devices.filter.state')),
    stateSelect,
  );
  filters.addEventListener('submit', (e) => e.preventDefault());

  const count = h('p', { class: 'count', role: 'status', 'data-testid': 'device-count' }, t('devices.loading'));
  const body = h('tbody');
  const columns = ['name', 'user', 'state', 'alert', 'lastReport', 'battery', 'type', 'group', 'tenant'] as const;
  const table = h(
    'table',
    { class: 'devices', 'data-testid': 'devices' },
    h('caption', { class: 'visually-hidden' }, t('devices.heading')),
    h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', { scope: 'col', class: `col-${c}` }, t(`devices.col.${c}`))))),
    body,
  );
  const previous = h('button', { type: 'button', 'data-testid': 'page-previous' }, t('devices.page.previous'));
  const next = h('button', { type: 'button', 'data-testid': 'page-next' }, t('devices.page.next'));
  const where = h('span', { 'data-testid': 'page-where' });
  const pager = h('nav', { class: 'pager', 'aria-label': t('devices.page.label') }, previous, where, next);
  outlet.append(
    h('main', { class: 'devices-page' }, h('h1', {}, t('devices.heading')), filters, count, h('div', { class: 'table-scroll' }, table), pager),
  );

  const fillChoices = (): void => {
    const types = new Set<string>();
    const groups = new Set<string>();
    for (const row of view.all()) {
      if (row.device.DeviceType) types.add(row.device.DeviceType);
      if (row.group) groups.add(row.group);
    }
    const groupLabel = (g: string): string => groupNames.get(g) ?? g.slice(g.indexOf('/') + 1);
    typeSelect.replaceChildren(
      option('', t('devices.filter.anyType'), filter.type === ''),
      ...[...types].sort().map((ty) => option(ty, ty, filter.type === ty)),
    );
    groupSelect.replaceChildren(
      option('', t('devices.filter.anyGroup'), filter.group === ''),
      ...[...groups]
        .sort((a, b) => groupLabel(a).localeCompare(groupLabel(b)))
        .map((g) => option(g, groupLabel(g), filter.group === g)),
    );
  };

  // Formatting a date builds an Intl formatter: a row's time is formatted once, not on
  // every redraw of its page.
  const times = new Map<string, string>();
  const reportTime = (iso: string): string => {
    let text = times.get(iso);
    if (text === undefined) {
      if (times.size > 20_000) times.clear();
      text = formatDateTime(iso);
      times.set(iso, text);
    }
    return text;
  };
  const tenantNames = new Map<string, string>();
  const cells = (row: Row, now: number, queue: readonly Alert[]): HTMLElement[] => {
    const d = row.device;
    const tc = d.TenantCode ?? scope;
    const battery = typeof d.BatteryPercentage === 'number' ? `${Math.round(d.BatteryPercentage)} %` : t('devices.none');
    const alert = openAlertOf(queue, tc, d.DeviceId);
    const seen = d.LastMessageTime
      ? [h('span', { class: 'seen-ago' }, t('devices.seenAgo', { age: formatAge(d.LastMessageTime, now) })), h('br'), h('small', {}, reportTime(d.LastMessageTime))]
      : [t('devices.never')];
    const name = tenantNames.get(tc);
    return [
      h('td', { class: 'col-name' }, h('a', { href: devicePath({ TenantCode: d.TenantCode, DeviceId: d.DeviceId }), 'data-link': true }, d.FriendlyName || d.DeviceId)),
      h('td', { class: 'col-user' }, userLabel(d) || (d.UserId ? t('devices.userHidden') : t('devices.noUser'))),
      h('td', { class: 'col-state' }, stateBadge(deviceState(d, now))),
      h('td', { class: 'col-alert' }, alert ? h('a', { href: alertPath(alert), 'data-link': true, 'data-testid': 'device-alert-link' }, t(alert.Status === 'Open' ? 'devices.alertOpen' : 'devices.alertAcknowledged')) : ''),
      h('td', { class: 'col-lastReport' }, ...seen),
      h('td', { class: 'col-battery' }, battery),
      h('td', { class: 'col-type' }, d.DeviceType ?? ''),
      h('td', { class: 'col-group' }, row.group ? (groupNames.get(row.group) ?? d.GroupId ?? '') : ''),
      h('td', { class: 'col-tenant' }, name ? `${name} (${tc})` : tc),
    ];
  };

  let loaded = false;
  const draw = (): void => {
    const now = Date.now();
    const rows = view.visible;
    const bounds = pageBounds(rows.length, page, PAGE_SIZE);
    page = bounds.page;
    const queue = live.alerts.queue();
    // The keyboard stays where it was when rows are redrawn under it.
    replaceRows(
      body,
      rows.slice(bounds.start, bounds.end).map((row) =>
        h('tr', { 'data-device': row.key, 'data-state': deviceState(row.device, now) }, ...cells(row, now, queue)),
      ),
      'data-device',
    );
    // A live region: told again only when the numbers change, not on every redraw.
    const counted = t('devices.count', { shown: rows.length, total: view.size });
    if (loaded && count.textContent !== counted) count.textContent = counted;
    where.textContent = t('devices.page.where', { page: bounds.page + 1, pages: bounds.pages });
    previous.disabled = bounds.page === 0;
    next.disabled = bounds.page >= bounds.pages - 1;
    table.hidden = rows.length === 0;
  };

  const refilter = (): void => {
    filter = {
      text: search.value,
      group: groupSelect.value,
      type: typeSelect.value,
      state: stateSelect.value as DeviceState | '',
    };
    page = 0;
    view.setFilter(filter, Date.now());
    filterToUrl(filter, page);
    draw();
  };
  search.addEventListener('input', refilter);
  for (const s of [groupSelect, typeSelect, stateSelect]) s.addEventListener('change', refilter);
  previous.addEventListener('click', () => {
    page -= 1;
    filterToUrl(filter, page);
    draw();
  });
  next.addEventListener('click', () => {
    page += 1;
    filterToUrl(filter, page);
    draw();
  });

  let closed = false;
  const readGroupNames = async (): Promise<void> => {
    const tenants = new Set<string>();
    for (const row of view.all()) if (row.group) tenants.add(row.device.TenantCode ?? scope);
    for (const tc of [...tenants].slice(0, GROUP_TENANTS)) {
      const groups = await api.get<{ GroupId?: string; Name?: string }[]>(v2(tc, 'groups')).catch(() => []);
      for (const g of groups) if (g.GroupId && g.Name) groupNames.set(`${tc}/${g.GroupId}`, g.Name);
      if (closed) return;
    }
    fillChoices();
    draw();
  };

  // The tenant column says whose device it is in words (the code beside the name).
  const readTenantNames = async (): Promise<void> => {
    const [own, below] = await Promise.all([
      api.get<{ TenantCode?: string | null; Description?: string | null }>(v2(scope)).catch(() => null),
      api.all<{ TenantCode?: string | null; Description?: string | null }>(`${v2(scope, 'tenants')}?subtenants=true`).catch(() => []),
    ]);
    if (closed) return;
    for (const tn of [own, ...below]) if (tn?.TenantCode && tn.Description) tenantNames.set(tn.TenantCode, tn.Description);
    draw();
  };

  const read = async (): Promise<void> => {
    const all: DeviceRecord[] = [];
    let token: string | null = null;
    do {
      const got: { items: DeviceRecord[]; next: string | null } = await api.page<DeviceRecord>(
        `${v2(scope, 'devices')}?subtenants=true&pageSize=${READ_PAGE}`,
        token,
      );
      if (closed) return;
      all.push(...got.items);
      token = got.next;
    } while (token);
    for (const d of all) live.devices.set(live.deviceKey(d.TenantCode ?? scope, d.DeviceId), d);
    view.replace(all, Date.now());
    waiting.clear();
    loaded = true;
    fillChoices();
    draw();
    void readGroupNames();
    void readTenantNames();
  };
  const load = (): void => {
    read().catch((e: unknown) => {
      count.textContent = t('devices.failed', { detail: e instanceof Error ? e.message : String(e) });
    });
  };
  load();

  // Stream bursts are coalesced: at most one redraw per animation frame.
  const waiting = new Map<string, DeviceRecord>();
  let frame = 0;
  const offDevice = live.deviceChanged.on((d) => {
    const key = live.deviceKey(d.TenantCode ?? scope, d.DeviceId);
    waiting.set(key, mergeDevice(waiting.get(key) ?? view.get(key)?.device, d));
    frame ||= requestAnimationFrame(() => {
      frame = 0;
      if (!loaded) return;
      view.update(waiting.values(), Date.now());
      waiting.clear();
      draw();
    });
  });
  const offResync = live.resync.on(load);
  // An alert raised or settled changes the alert column.
  const offAlert = live.alertChanged.on(() => {
    if (loaded) draw();
  });
  const offQueue = live.queueReloaded.on(() => {
    if (loaded) draw();
  });
  // A device falls silent with time alone: the states are looked at again now and then.
  const timer = window.setInterval(() => {
    if (!loaded) return;
    view.rebuild(Date.now());
    draw();
  }, 30_000);
  return () => {
    closed = true;
    offDevice();
    offResync();
    offAlert();
    offQueue();
    if (frame) cancelAnimationFrame(frame);
    window.clearInterval(timer);
  };
}
