// Sending a device a message or a command (MT messages) and following their status. Only
// a role with DeviceMessages is offered the form (the API refuses the others anyway).
import { api, ApiError, v2 } from '../api';
import { h } from '../dom';
import { t } from '../i18n';
import { formatDateTime } from '../format';
import { session } from '../session';
import { problemText } from './admin/common';
import { SATELLITE_TEXT_LIMIT, textChannel, textLength, type DeviceRecord } from '../devices';

export interface MtMessage {
  MessageId?: string;
  Type?: string;
  Message?: string | null;
  Parameters?: Record<string, unknown>;
  Status?: string | null;
  CreatedAt?: string | null;
  Timestamp?: string | null;
}

/** The API's MT message types (docs/api.md, "Devices"). */
export const MT_TYPES = [
  'Text',
  'LocationRequest',
  'CheckInRequest',
  'ReportingFrequency',
  'StartMonitoring',
  'StopMonitoring',
  'ForceStopMonitoring',
  'StartCheckInSchedule',
  'StopCheckInSchedule',
  'Call',
] as const;
/** The commands that take an interval (`Parameters.Interval`, minutes). */
const WITH_INTERVAL = new Set(['CheckInRequest', 'ReportingFrequency', 'StartCheckInSchedule']);
/** Messages listed (the newest). */
const SHOWN = 20;
/** How often the statuses are read again while one is not final. */
const POLL_MS = 5000;

const STATUSES = ['Queued', 'Sent', 'Delivered', 'Failed'] as const;

/** Ready-made texts an operator picks (the catalogue's words, in the operator's language). */
export const CANNED = ['checkIn', 'callUs', 'helpComing', 'stayPut', 'received'] as const;

/** The type's name in the catalogue (one the console does not know yet: as the API says). */
function typeName(type: string | undefined): string {
  return (MT_TYPES as readonly string[]).includes(type ?? '') ? t(`device.mt.type.${type as (typeof MT_TYPES)[number]}`) : (type ?? '');
}

function statusName(status: string | null | undefined): string {
  return (STATUSES as readonly string[]).includes(status ?? '') ? t(`device.mt.status.${status as (typeof STATUSES)[number]}`) : (status ?? '');
}

export function maySend(): boolean {
  return session()?.Permissions?.includes('DeviceMessages') ?? false;
}

/** Whether a text can reach the device, said where the operator writes it (null: it can). */
function channelWarning(device: DeviceRecord): HTMLElement | null {
  const channel = textChannel(device);
  if (channel === 'satellite' || channel === 'app') return null;
  return h('p', { class: 'warning', role: 'note', 'data-testid': 'mt-no-channel' }, t(channel === 'noImei' ? 'device.mt.noImei' : 'device.mt.noChannel'));
}

export function commandsSection(tc: string, deviceId: string, device: DeviceRecord): { element: HTMLElement; close: () => void } {
  const base = v2(tc, 'devices', deviceId, 'mtmessages');
  const list = h('tbody');
  const table = h(
    'table',
    { class: 'mt-messages', 'data-testid': 'mt-messages' },
    h('caption', { class: 'visually-hidden' }, t('device.mt.listCaption')),
    h('thead', {}, h('tr', {}, ...(['created', 'type', 'text', 'status'] as const).map((c) => h('th', { scope: 'col' }, t(`device.mt.col.${c}`))))),
    list,
  );
  const empty = h('p', { class: 'empty' }, t('device.mt.empty'));
  const result = h('p', { class: 'action-result', role: 'status', 'data-testid': 'mt-result' });
  const children: HTMLElement[] = [h('h2', { id: 'mt-h' }, t('device.mt.heading'))];

  if (maySend()) {
    const type = h('select', { id: 'mt-type', 'data-testid': 'mt-type' }, ...MT_TYPES.map((ty) => h('option', { value: ty }, t(`device.mt.type.${ty}`))));
    const satellite = textChannel(device) === 'satellite';
    const text = h('textarea', { id: 'mt-text', rows: 2, maxlength: 4000, 'data-testid': 'mt-text', 'aria-describedby': 'mt-count' });
    const counter = h('small', { id: 'mt-count', class: 'hint', 'aria-live': 'polite', 'data-testid': 'mt-count' });
    const canned = h(
      'select',
      { id: 'mt-canned', 'data-testid': 'mt-canned' },
      h('option', { value: '' }, t('device.mt.cannedPick')),
      ...CANNED.map((c) => h('option', { value: c }, t(`device.mt.canned.${c}`))),
    );
    const cannedRow = h('div', { class: 'field' }, h('label', { for: 'mt-canned' }, t('device.mt.canned')), canned);
    const count = (): void => {
      const n = textLength(text.value);
      if (satellite) {
        counter.textContent = t('device.mt.countSatellite', { n, max: SATELLITE_TEXT_LIMIT });
        counter.className = n > SATELLITE_TEXT_LIMIT ? 'hint error' : 'hint';
        text.setCustomValidity(n > SATELLITE_TEXT_LIMIT ? t('device.mt.tooLong', { max: SATELLITE_TEXT_LIMIT }) : '');
      } else counter.textContent = t('device.mt.count', { n });
    };
    text.addEventListener('input', count);
    canned.addEventListener('change', () => {
      if (!canned.value) return;
      text.value = t(`device.mt.canned.${canned.value as (typeof CANNED)[number]}`);
      canned.value = '';
      count();
      text.focus();
    });
    const interval = h('input', { id: 'mt-interval', type: 'number', min: 1, max: 10080, 'data-testid': 'mt-interval' });
    const intervalRow = h('div', { class: 'field' }, h('label', { for: 'mt-interval' }, t('device.mt.interval')), interval);
    const send = h('button', { type: 'submit' }, t('device.mt.send'));
    const form = h(
      'form',
      { class: 'mt-form', 'data-testid': 'mt-form' },
      h('div', { class: 'field' }, h('label', { for: 'mt-type' }, t('device.mt.type')), type),
      cannedRow,
      h('div', { class: 'field' }, h('label', { for: 'mt-text' }, t('device.mt.text')), text, counter),
      intervalRow,
      send,
    );
    const fit = (): void => {
      text.required = type.value === 'Text';
      cannedRow.hidden = type.value !== 'Text';
      intervalRow.hidden = !WITH_INTERVAL.has(type.value);
      count();
    };
    type.addEventListener('change', fit);
    fit();
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const body: MtMessage = { Type: type.value };
      if (text.value.trim()) body.Message = text.value;
      if (WITH_INTERVAL.has(type.value) && interval.value) body.Parameters = { Interval: interval.value };
      send.disabled = true;
      result.className = 'action-result';
      api
        .post(base, body)
        .then(() => {
          result.textContent = t('device.mt.queued');
          text.value = '';
          count();
          return refresh();
        })
        .catch((err: unknown) => {
          result.className = 'action-result error';
          // The API's refusal in words (a field as its label, not its path).
          result.textContent = t('device.mt.failed', { detail: err instanceof ApiError ? problemText(err) : err instanceof Error ? err.message : String(err) });
        })
        .finally(() => (send.disabled = false));
    });
    const warning = channelWarning(device);
    if (warning) children.push(warning);
    children.push(form);
  } else {
    children.push(h('p', { class: 'hint', 'data-testid': 'mt-not-allowed' }, t('device.mt.notAllowed')));
  }
  children.push(result, table, empty);
  const element = h('section', { class: 'commands', 'aria-labelledby': 'mt-h' }, ...children);

  let closed = false;
  let timer = 0;
  const draw = (newest: MtMessage[]): void => {
    list.replaceChildren(
      ...newest.map((m) =>
        h(
          'tr',
          { 'data-mt': m.MessageId ?? '', 'data-status': m.Status ?? '' },
          h('td', {}, formatDateTime(m.CreatedAt)),
          h('td', {}, typeName(m.Type)),
          h('td', { class: 'text' }, m.Message ?? ''),
          h('td', { class: 'status' }, statusName(m.Status)),
        ),
      ),
    );
    table.hidden = newest.length === 0;
    empty.hidden = newest.length > 0;
  };
  const refresh = async (): Promise<void> => {
    const { items: messages } = await api.page<MtMessage>(`${base}?newestFirst=true&pageSize=${SHOWN}`);
    if (closed) return;
    draw(messages);
    window.clearTimeout(timer);
    if (messages.some((m) => m.Status === 'Queued' || m.Status === 'Sent')) {
      timer = window.setTimeout(() => void refresh().catch(() => undefined), POLL_MS);
    }
  };
  void refresh().catch(() => draw([]));
  return {
    element,
    close: () => {
      closed = true;
      window.clearTimeout(timer);
    },
  };
}
