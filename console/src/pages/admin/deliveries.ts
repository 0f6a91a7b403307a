// The deliveries log of the working tenant, newest first: filters (status, channel, the
// time they were created, in the profile's zone), more pages on demand, and a retry for
// the ones that failed, expired or found no channel.
import { api, v2 } from '../../api';
import { h, replaceRows } from '../../dom';
import { t, type Key } from '../../i18n';
import { formatDateTime } from '../../format';
import { session, tenant } from '../../session';
import { may } from '../../roles';
import { zonedInstant } from '../../preferences';
import { cell, field, page, resultLine, select, table } from './common';

export interface Delivery {
  DeliveryId?: string;
  Channel?: string;
  Target?: string | null;
  Status?: string;
  Attempts?: number;
  CreatedAt?: string;
  SentAt?: string | null;
  LastError?: string | null;
  DeviceId?: string | null;
}

export const STATUSES = ['Pending', 'NotConfigured', 'NoAddress', 'Sent', 'Failed', 'Expired'] as const;
export const CHANNELS = ['Email', 'Sms', 'Voice', 'Mt', 'Webhook', 'Garmin'] as const;
const RETRYABLE = new Set(['Failed', 'Expired', 'NotConfigured']);

export const statusLabel = (s: string | undefined): string =>
  (STATUSES as readonly string[]).includes(s ?? '') ? t(`delivery.status.${s}` as Key) : s ?? '';

/** A channel's name for operators (the API's own word when it is one the console does not know). */
export const channelLabel = (c: string | undefined): string =>
  (CHANNELS as readonly string[]).includes(c ?? '') ? t(`delivery.channel.${c}` as Key) : c ?? '';

/** The query of the log's filters (empty values are left out). */
export function deliveriesQuery(f: { status?: string; channel?: string; target?: string; from?: string | null; to?: string | null; pageSize?: number }): string {
  const q = new URLSearchParams({ newestFirst: 'true' });
  if (f.status) q.set('status', f.status);
  if (f.channel) q.set('channel', f.channel);
  if (f.target) q.set('target', f.target);
  if (f.from) q.set('from', f.from);
  if (f.to) q.set('to', f.to);
  if (f.pageSize) q.set('pageSize', String(f.pageSize));
  return q.toString();
}

/** One delivery as a row; `onRetried` after a successful retry. */
export function deliveryRow(d: Delivery, withTarget: boolean, result: ReturnType<typeof resultLine>, onRetried: () => void): HTMLElement {
  const actions = h('div', { class: 'row-actions' });
  if (may(session(), 'ManageConfiguration') && RETRYABLE.has(d.Status ?? '')) {
    const retry = h('button', { type: 'button', 'aria-label': t('deliveries.retryOf', { id: d.DeliveryId ?? '' }) }, t('deliveries.retry'));
    retry.addEventListener('click', () => {
      retry.disabled = true;
      void api
        .post(v2(tenant(), 'deliveries', d.DeliveryId ?? '', 'retry'))
        .then(() => {
          result.ok(t('deliveries.retried', { id: d.DeliveryId ?? '' }));
          onRetried();
        })
        .catch((err: unknown) => {
          retry.disabled = false;
          result.fail(err);
        });
    });
    actions.append(retry);
  }
  return h(
    'tr',
    { 'data-delivery': d.DeliveryId ?? '', 'data-status': d.Status ?? '' },
    cell(t('deliveries.col.createdAt'), formatDateTime(d.CreatedAt)),
    cell(t('deliveries.col.channel'), channelLabel(d.Channel)),
    withTarget ? cell(t('deliveries.col.target'), d.Target ?? '') : null,
    cell(t('deliveries.col.status'), h('span', { class: 'delivery-status', 'data-status': d.Status ?? '' }, statusLabel(d.Status))),
    cell(t('deliveries.col.attempts'), String(d.Attempts ?? 0)),
    cell(t('deliveries.col.lastError'), d.LastError ?? ''),
    cell(t('deliveries.col.actions'), actions),
  );
}

export function deliveryHeaders(withTarget: boolean): string[] {
  return (['createdAt', 'channel', ...(withTarget ? ['target'] : []), 'status', 'attempts', 'lastError', 'actions'] as const).map((c) =>
    t(`deliveries.col.${c}` as Key),
  );
}

export function deliveriesPage(outlet: HTMLElement): () => void {
  const result = resultLine('deliveries-result');
  const status = select([['', t('deliveries.any')], ...STATUSES.map((s): [string, string] => [s, statusLabel(s)])]);
  const channel = select([['', t('deliveries.any')], ...CHANNELS.map((c): [string, string] => [c, channelLabel(c)])]);
  const from = h('input', { type: 'datetime-local' });
  const to = h('input', { type: 'datetime-local' });
  const apply = h('button', { type: 'submit' }, t('deliveries.apply'));
  const filters = h(
    'form',
    { class: 'admin-form filters', 'data-testid': 'delivery-filters', role: 'search', 'aria-label': t('deliveries.filters') },
    field(t('deliveries.status'), status),
    field(t('deliveries.channel'), channel),
    field(t('deliveries.from'), from),
    field(t('deliveries.to'), to),
    apply,
  );
  const { table: list, body } = table(t('deliveries.heading'), deliveryHeaders(true), 'deliveries');
  const more = h('button', { type: 'button', hidden: true }, t('deliveries.more'));
  const empty = h('p', { class: 'empty', hidden: true }, t('deliveries.empty'));
  outlet.append(page('deliveries-page', t('deliveries.heading'), filters, result.el, list, empty, more));

  let alive = true;
  let next: string | null = null;
  let path = '';
  async function read(first: boolean): Promise<void> {
    try {
      if (first) {
        const zone = session()?.TimeZoneId;
        path = `${v2(tenant(), 'deliveries')}?${deliveriesQuery({
          status: status.value, channel: channel.value, from: zonedInstant(from.value, zone), to: zonedInstant(to.value, zone), pageSize: 50,
        })}`;
        next = null;
      }
      const pageRead = await api.page<Delivery>(path, first ? null : next);
      if (!alive) return;
      const rows = pageRead.items.map((d) => deliveryRow(d, true, result, () => void read(true)));
      if (first) replaceRows(body, rows, 'data-delivery');
      else body.append(...rows);
      next = pageRead.next;
      more.hidden = !next;
      empty.hidden = body.childElementCount > 0;
    } catch (e) {
      result.fail(e);
    }
  }
  filters.addEventListener('submit', (e) => {
    e.preventDefault();
    result.clear();
    void read(true);
  });
  more.addEventListener('click', () => void read(false));
  void read(true);
  return () => {
    alive = false;
  };
}
