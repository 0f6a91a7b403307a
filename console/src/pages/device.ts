// A device's page: its state (kept current from the stream), its recent messages (newest
// first, paged back in time), the replay of its track, and the messages sent to it.
import { api, NotFoundError, v2 } from '../api';
import { h } from '../dom';
import { t, type Key } from '../i18n';
import { formatAge, formatDateTime, formatNumber } from '../format';
import * as live from '../live';
import { tenant } from '../session';
import { checkInDue, deviceState, mergeDevice, openAlertOf, userLabel, type DeviceRecord } from '../devices';
import { stateBadge } from './devices';
import { alertPath } from './queue';
import { plainAddress } from './admin/common';
import { replaySection } from './device-replay';
import { commandsSection } from './device-commands';

/** What the device page shows of the assigned person's profile. */
interface Profile {
  CellPhone?: string | null;
  DaytimePhone?: string | null;
  EveningPhone?: string | null;
  EmergencyContactName?: string | null;
  EmergencyContactAddress?: string | null;
  EmergencyContactTelephoneNumber?: string | null;
  EmergencyContactName2?: string | null;
  EmergencyContactAddress2?: string | null;
  EmergencyContactTelephoneNumber2?: string | null;
  EmergencyInformation?: string | null;
}

/** A phone number as a `tel:` link (text as sent), or a dash. */
function phone(n: string | null | undefined): Node | string {
  const number = n?.trim();
  return number ? h('a', { href: `tel:${number.replace(/[^+\d]/g, '')}` }, number) : t('devices.none');
}

/** The person the device is assigned to: name (to their profile), phones, emergency contacts. */
function personSection(d: DeviceRecord): { element: HTMLElement; load: () => Promise<void> } {
  const body = h('div', { 'data-testid': 'device-person' });
  const element = h('section', { class: 'device-person', 'aria-labelledby': 'person-h' }, h('h2', { id: 'person-h' }, t('device.person.heading')), body);
  const u = d.AssignedUser;
  if (!u) {
    body.append(h('p', { class: 'empty' }, d.UserId ? t('devices.userHidden') : t('device.person.none')));
    return { element, load: async () => undefined };
  }
  const profileLink = h('a', { href: `/users?q=${encodeURIComponent(u.Username)}&user=${encodeURIComponent(`${u.TenantCode}/${u.UserId}`)}`, 'data-link': true, 'data-testid': 'device-user' }, userLabel(d));
  body.append(h('p', {}, profileLink, ' ', h('span', { class: 'hint' }, u.Username)));
  const load = async (): Promise<void> => {
    let p: Profile;
    try {
      p = await api.get<Profile>(v2(u.TenantCode, 'userprofile', u.UserId));
    } catch {
      body.append(h('p', { class: 'hint' }, t('device.person.noProfile')));
      return;
    }
    const contact = (name?: string | null, tel?: string | null, address?: string | null): HTMLElement | null =>
      name || tel || address
        ? h('li', { 'data-testid': 'emergency-contact' }, name ?? '', ' ', phone(tel), address ? h('span', { class: 'hint' }, ` ${plainAddress(address)}`) : '')
        : null;
    const contacts = [
      contact(p.EmergencyContactName, p.EmergencyContactTelephoneNumber, p.EmergencyContactAddress),
      contact(p.EmergencyContactName2, p.EmergencyContactTelephoneNumber2, p.EmergencyContactAddress2),
    ].filter((c): c is HTMLElement => c !== null);
    body.append(
      h(
        'dl',
        { class: 'summary' },
        h('dt', {}, t('device.person.cell')),
        h('dd', {}, phone(p.CellPhone)),
        h('dt', {}, t('device.person.daytime')),
        h('dd', {}, phone(p.DaytimePhone)),
      ),
      h('h3', {}, t('device.person.contacts')),
      contacts.length ? h('ul', { class: 'contacts' }, ...contacts) : h('p', { class: 'empty' }, t('device.person.noContacts')),
      ...(p.EmergencyInformation ? [h('h3', {}, t('device.person.information')), h('p', { class: 'text' }, p.EmergencyInformation)] : []),
    );
  };
  return { element, load };
}

interface MoMessage {
  MessageId?: string;
  MessageType?: string | null;
  Message?: string | null;
  SentFromDevice?: string | null;
  ReceivedAtServer?: string | null;
  EmergencyState?: string | null;
  Position?: { Latitude?: number | null; Longitude?: number | null } | null;
}

/** Messages per page of the list. */
const MESSAGES_PAGE = 25;

function position(lat: number | null | undefined, lon: number | null | undefined): string {
  if (typeof lat !== 'number' || typeof lon !== 'number') return t('devices.none');
  return `${formatNumber(lat)}, ${formatNumber(lon)}`;
}

function messageRow(m: MoMessage): HTMLElement {
  return h(
    'tr',
    { 'data-message': m.MessageId ?? '' },
    h('td', {}, formatDateTime(m.SentFromDevice ?? m.ReceivedAtServer)),
    h('td', {}, m.MessageType ?? ''),
    h('td', { class: 'text' }, m.Message ?? ''),
    h('td', {}, position(m.Position?.Latitude, m.Position?.Longitude)),
    h('td', {}, formatDateTime(m.ReceivedAtServer)),
  );
}

export function devicePage(outlet: HTMLElement, params: Record<string, string>): () => void {
  const tc = params.tenant ?? '';
  const id = params.id ?? '';
  const key = live.deviceKey(tc, id);
  const heading = h('h1', {}, id);
  const summary = h('dl', { class: 'summary', 'data-testid': 'device-summary' });
  const main = h('main', { class: 'device-page' }, h('p', {}, h('a', { href: '/devices', 'data-link': true }, t('device.back'))), heading);
  outlet.append(main);
  let device: DeviceRecord | null = null;
  const closers: (() => void)[] = [];

  const drawSummary = (): void => {
    if (!device) return;
    const d = device;
    heading.textContent = d.FriendlyName || d.DeviceId;
    const state = deviceState(d, Date.now());
    summary.dataset.state = state;
    const due = checkInDue(d);
    const alert = openAlertOf(live.alerts.queue(), tc, d.DeviceId);
    const pairs: [Key, Node | string][] = [
      ['device.id', d.DeviceId],
      ['device.state', stateBadge(state)],
      [
        'device.openAlert',
        alert
          ? h('a', { href: alertPath(alert), 'data-link': true, 'data-testid': 'device-open-alert' }, t(alert.Status === 'Open' ? 'devices.alertOpen' : 'devices.alertAcknowledged'), ' — ', alert.NotificationName ?? '', ' ', formatDateTime(alert.RaisedAt))
          : t('device.noOpenAlert'),
      ],
      ['device.user', userLabel(d) || (d.UserId ? t('devices.userHidden') : t('devices.noUser'))],
      ['device.lastReport', d.LastMessageTime ? `${formatDateTime(d.LastMessageTime)} (${t('devices.seenAgo', { age: formatAge(d.LastMessageTime, Date.now()) })})` : t('devices.never')],
      ['device.position', position(d.LastPosition?.Lat, d.LastPosition?.Lon)],
      ['device.positionTime', formatDateTime(d.LastPosition?.GpsTimestamp)],
      ['device.emergency', d.EmergencyState === 'Active' ? t('device.emergency.active') : t('device.emergency.none')],
      ['device.battery', typeof d.BatteryPercentage === 'number' ? `${formatNumber(d.BatteryPercentage, 0)} %` : t('devices.none')],
      ['device.checkInDue', due === null ? t('device.noCheckIn') : formatDateTime(new Date(due).toISOString())],
      ['device.type', d.DeviceType ?? ''],
      ['device.tenant', d.TenantCode ?? tc],
    ];
    summary.replaceChildren(...pairs.flatMap(([k, v]) => [h('dt', {}, t(k)), h('dd', { 'data-field': k }, v)]));
  };

  // Recent messages: newest first, a page at a time; new ones are read when the device
  // reports (its stream event), older ones on request.
  const messages = h('tbody');
  const older = h('button', { type: 'button', 'data-testid': 'messages-older', hidden: true }, t('device.messages.older'));
  const noMessages = h('p', { class: 'empty', hidden: true }, t('device.messages.empty'));
  const messagesTable = h(
    'table',
    { class: 'messages', 'data-testid': 'device-messages' },
    h('caption', { class: 'visually-hidden' }, t('device.messages.heading')),
    h('thead', {}, h('tr', {}, ...(['time', 'type', 'text', 'position', 'received'] as const).map((c) => h('th', { scope: 'col' }, t(`device.messages.col.${c}`))))),
    messages,
  );
  const seen = new Set<string>();
  let olderToken: string | null = null;
  const messagesPath = `${v2(tc, 'devices', id, 'momessages')}?newestFirst=true&pageSize=${MESSAGES_PAGE}`;
  const showMessages = (items: MoMessage[], where: 'top' | 'bottom'): void => {
    const fresh = items.filter((m) => !m.MessageId || !seen.has(m.MessageId));
    for (const m of fresh) if (m.MessageId) seen.add(m.MessageId);
    const rows = fresh.map(messageRow);
    if (where === 'top') messages.prepend(...rows);
    else messages.append(...rows);
    noMessages.hidden = messages.childElementCount > 0;
    messagesTable.hidden = messages.childElementCount === 0;
  };
  const readNewest = async (): Promise<void> => {
    const page = await api.page<MoMessage>(messagesPath);
    if (seen.size === 0) olderToken = page.next;
    // Only what is not shown yet goes on top (newest first, so in the page's order).
    showMessages(page.items, 'top');
    older.hidden = olderToken === null;
  };
  older.addEventListener('click', () => {
    if (!olderToken) return;
    older.disabled = true;
    void api
      .page<MoMessage>(messagesPath, olderToken)
      .then((page) => {
        olderToken = page.next;
        showMessages(page.items, 'bottom');
        older.hidden = olderToken === null;
      })
      .finally(() => (older.disabled = false));
  });

  void (async () => {
    try {
      device = await api.get<DeviceRecord>(v2(tc, 'devices', id));
    } catch (e) {
      main.append(h('p', { class: 'message', role: 'alert' }, e instanceof NotFoundError ? t('device.notFound') : t('devices.failed', { detail: e instanceof Error ? e.message : String(e) })));
      return;
    }
    device = { ...device, TenantCode: device.TenantCode ?? tc };
    live.devices.set(key, device);
    drawSummary();
    const replay = replaySection(tc, id, () => device?.LastMessageTime);
    const commands = commandsSection(tc, id, device);
    const person = personSection(device);
    closers.push(replay.close, commands.close);
    main.append(
      h('section', { class: 'device-state-section', 'aria-labelledby': 'state-h' }, h('h2', { id: 'state-h' }, t('device.stateHeading')), summary),
      person.element,
      h('section', { class: 'recent', 'aria-labelledby': 'messages-h' }, h('h2', { id: 'messages-h' }, t('device.messages.heading')), h('div', { class: 'table-scroll' }, messagesTable), noMessages, older),
      replay.element,
      commands.element,
    );
    await Promise.all([readNewest().catch(() => undefined), person.load()]);
  })();

  let frame = 0;
  const offDevice = live.deviceChanged.on((d) => {
    if (live.deviceKey(d.TenantCode ?? tenant(), d.DeviceId) !== key) return;
    const reported = d.LastMessageTime !== device?.LastMessageTime;
    device = { ...mergeDevice(device ?? undefined, { ...device, ...d }), TenantCode: tc };
    frame ||= requestAnimationFrame(() => {
      frame = 0;
      drawSummary();
    });
    if (reported) void readNewest().catch(() => undefined);
  });
  const offResync = live.resync.on(() => void readNewest().catch(() => undefined));
  // The open alert's link follows the queue.
  const offAlert = live.alertChanged.on(drawSummary);
  const offQueue = live.queueReloaded.on(drawSummary);
  const timer = window.setInterval(drawSummary, 30_000);
  return () => {
    offDevice();
    offResync();
    offAlert();
    offQueue();
    if (frame) cancelAnimationFrame(frame);
    window.clearInterval(timer);
    closers.forEach((c) => c());
  };
}
