// What an alert's page says about the worker's side: what they sent (the message's text,
// type, times, the fix's age and accuracy, how late it came) and whom to call (the
// device's own number, the worker, both emergency contacts, the manager) — every number a
// `tel:` link and every e-mail a `mailto:` link, all built as elements from text.
import { api, v2 } from '../api';
import { h } from '../dom';
import { t, type Key } from '../i18n';
import { formatAge, formatDateTime } from '../format';
import { lateness, mailLink, telLink, type Alert } from '../alerts';
import * as live from '../live';
import { userLabel, type DeviceRecord } from '../devices';

interface Profile {
  DaytimePhone?: string | null;
  EveningPhone?: string | null;
  CellPhone?: string | null;
  EmergencyContactName?: string | null;
  EmergencyContactAddress?: string | null;
  EmergencyContactTelephoneNumber?: string | null;
  EmergencyContactName2?: string | null;
  EmergencyContactAddress2?: string | null;
  EmergencyContactTelephoneNumber2?: string | null;
  EmergencyInformation?: string | null;
}

interface SentMessage {
  MessageType?: string | null;
  Message?: string | null;
  SentFromDevice?: string | null;
  ReceivedAtServer?: string | null;
  Position?: { GpsTimestamp?: string | null; Accuracy?: string | null } | null;
}

/** What is read here of a user and a device (fields the records have). */
interface Person {
  Username?: string | null;
  ManagerUserId?: string | null;
}
interface Phoned {
  PhoneNumber?: string | null;
}

type Entry = [Key, Node | string, string?];

function rows(entries: Entry[]): Node[] {
  return entries.flatMap(([k, v, id]) => [h('dt', {}, t(k)), h('dd', { 'data-field': k, ...(id ? { 'data-testid': id } : {}) }, v)]);
}

/** A number as a `tel:` link (as text when it has no digits). */
export function phone(number: string | null | undefined): Node | string {
  const href = telLink(number);
  return href ? h('a', { href, class: 'tel' }, number ?? '') : (number ?? '');
}

/** An address as a `mailto:` link when it reads as an e-mail, else as text. */
export function address(text: string | null | undefined): Node | string {
  const href = mailLink(text);
  return href ? h('a', { href, class: 'mail' }, text ?? '') : (text ?? '');
}

/** Several things side by side (none: a dash). */
function several(items: (Node | string)[]): Node {
  const shown = items.filter((i) => i !== '');
  if (!shown.length) return document.createTextNode(t('alert.none'));
  const span = h('span', { class: 'several' });
  shown.forEach((item, i) => span.append(...(i ? [' · ', item] : [item])));
  return span;
}

/** A time span as an age reads (`4 min`, `2 h 5 min`). */
export function formatSpan(ms: number): string {
  const now = Date.now();
  return formatAge(new Date(now - ms).toISOString(), now);
}

/** What the worker sent: the raising message, read whole for its times and fix. */
export async function sentBy(tc: string, a: Alert, into: HTMLElement): Promise<void> {
  const message =
    a.MessageId && a.DeviceId
      ? await api.get<SentMessage>(v2(tc, 'devices', a.DeviceId, 'momessages', a.MessageId)).catch(() => null)
      : null;
  const now = Date.now();
  const text = a.MessageText ?? message?.Message ?? null;
  const entries: Entry[] = [
    ['duty.sent.text', text ? h('q', { class: 'message-text' }, text) : t('duty.sent.noText'), 'message-text'],
    ['duty.sent.type', a.MessageType ?? message?.MessageType ?? t('alert.none')],
  ];
  if (message) {
    entries.push(['duty.sent.at', formatDateTime(message.SentFromDevice ?? message.ReceivedAtServer)]);
    const fix = message.Position?.GpsTimestamp ?? message.SentFromDevice;
    entries.push(['duty.sent.fix', fix ? t('duty.sent.fixAge', { at: formatDateTime(fix), age: formatAge(fix, now) }) : t('alert.none')]);
    entries.push(['duty.sent.accuracy', message.Position?.Accuracy || t('alert.none')]);
  }
  if (a.Late) {
    const delay = lateness(message?.SentFromDevice, message?.ReceivedAtServer);
    entries.push(['duty.late', delay === null ? t('duty.lateUnknown') : t('duty.lateBy', { delay: formatSpan(delay) }), 'late']);
  }
  if (!a.MessageId) entries.splice(0, entries.length, ['duty.sent.text', t('duty.sent.none')]);
  into.replaceChildren(...rows(entries));
}

/** Whom to call: the device, its worker, their emergency contacts, their manager. */
export async function peopleOf(tc: string, a: Alert, into: HTMLElement): Promise<void> {
  if (!a.DeviceId) return;
  const d = await live.device(tc, a.DeviceId);
  const entries: Entry[] = [
    ['alert.device', d?.FriendlyName ? `${d.FriendlyName} (${a.DeviceId})` : a.DeviceId],
    ['duty.devicePhone', several([phone((d as Phoned | null)?.PhoneNumber)]), 'device-phone'],
  ];
  if (d?.UserId) {
    // The person may belong to a subtenant of the device's tenant (AssignedUser says which).
    const assigned = (d as DeviceRecord).AssignedUser;
    const ut = assigned?.UserId === d.UserId ? assigned.TenantCode : tc;
    const profileOf = (id: string): Promise<Profile | null> => api.get<Profile>(v2(ut, 'userprofile', id)).catch(() => null);
    const [user, p] = await Promise.all([live.user(ut, d.UserId), profileOf(d.UserId)]);
    const u = user as Person | null;
    entries.push(['alert.user', live.userName(user) || userLabel({ AssignedUser: assigned }) || d.UserId]);
    entries.push(['alert.phones', several([p?.CellPhone, p?.DaytimePhone, p?.EveningPhone].map(phone)), 'user-phones']);
    entries.push(['duty.email', several([address(u?.Username)]), 'user-email']);
    const contact = (name?: string | null, tel?: string | null, addr?: string | null): Node =>
      several([name ?? '', phone(tel), address(addr)]);
    entries.push(['duty.contact1', contact(p?.EmergencyContactName, p?.EmergencyContactTelephoneNumber, p?.EmergencyContactAddress), 'contact-1']);
    entries.push(['duty.contact2', contact(p?.EmergencyContactName2, p?.EmergencyContactTelephoneNumber2, p?.EmergencyContactAddress2), 'contact-2']);
    entries.push(['alert.emergencyInformation', p?.EmergencyInformation || t('alert.none')]);
    if (u?.ManagerUserId) {
      const [m, mp] = await Promise.all([live.user(ut, u.ManagerUserId), profileOf(u.ManagerUserId)]);
      entries.push([
        'duty.manager',
        several([live.userName(m) || u.ManagerUserId, ...[mp?.CellPhone, mp?.DaytimePhone].map(phone), address((m as Person | null)?.Username)]),
        'manager',
      ]);
    }
  } else {
    entries.push(['alert.user', t('duty.noUser')]);
  }
  into.replaceChildren(...rows(entries));
}
