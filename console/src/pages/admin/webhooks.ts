// Webhook settings of the working tenant: up to ten URLs with their six category flags,
// the authentication, and each saved URL's recent deliveries with a retry (docs/api.md,
// "Events, alerts and deliveries"). Saved with If-Match: a change made meanwhile is a 412.
import { api, v2 } from '../../api';
import { h, replaceRows } from '../../dom';
import { t, type Key } from '../../i18n';
import { tenant } from '../../session';
import { checkbox, field, page, resultLine, select, table } from './common';
import { deliveriesQuery, deliveryHeaders, deliveryRow, type Delivery } from './deliveries';

const CATEGORIES = ['Device', 'EventNotification', 'MoMessage', 'MtMessage', 'Tenant', 'User'] as const;
type Category = (typeof CATEGORIES)[number];
const AUTHENTICATIONS = ['None', 'Basic', 'Bearer', 'HmacSha256'] as const;
const MAX_URLS = 10;

interface WebhookUrl extends Partial<Record<Category, boolean>> {
  Url?: string | null;
}
interface WebhookSettings {
  Urls?: WebhookUrl[] | null;
  Authentication?: string | null;
  Username?: string | null;
}

export function webhooksPage(outlet: HTMLElement): () => void {
  const result = resultLine('webhooks-result');
  const urls = h('ol', { class: 'webhook-urls', 'data-testid': 'webhook-urls' });
  const add = h('button', { type: 'button' }, t('webhooks.addUrl'));
  const auth = select(AUTHENTICATIONS.map((a) => [a, t(`webhooks.auth.${a}` as Key)]));
  const username = h('input', { autocomplete: 'off' });
  const password = h('input', { type: 'password', autocomplete: 'new-password' });
  const usernameField = field(t('webhooks.username'), username);
  const passwordField = field(t('webhooks.secret'), password, t('webhooks.secretHint'));
  const save = h('button', { type: 'submit' }, t('webhooks.save'));
  const form = h(
    'form',
    { class: 'admin-form', 'data-testid': 'webhooks-form' },
    h('h2', {}, t('webhooks.urls')),
    urls,
    add,
    h('h2', {}, t('webhooks.authentication')),
    field(t('webhooks.authType'), auth),
    usernameField,
    passwordField,
    save,
  );
  outlet.append(page('webhooks-page', t('webhooks.heading'), form, result.el));

  const showAuthFields = (): void => {
    usernameField.hidden = auth.value !== 'Basic';
    passwordField.hidden = auth.value === 'None';
  };
  auth.addEventListener('change', showAuthFields);

  let etag: string | null = null;
  let alive = true;
  const entries: Array<{ url: HTMLInputElement; flags: Record<Category, HTMLInputElement> }> = [];

  function addUrl(value: WebhookUrl, saved: boolean): void {
    const n = entries.length + 1;
    const url = h('input', { type: 'url', required: true, autocomplete: 'off', value: value.Url ?? '' });
    const flags = {} as Record<Category, HTMLInputElement>;
    const boxes = CATEGORIES.map((c) => {
      const box = checkbox(t(`webhooks.category.${c}` as Key), value[c] ?? false, { 'data-category': c });
      flags[c] = box.input;
      return box.wrap;
    });
    const entry = { url, flags };
    entries.push(entry);
    const remove = h('button', { type: 'button', 'aria-label': t('webhooks.removeUrl', { n }) }, t('webhooks.remove'));
    const item = h(
      'li',
      { class: 'webhook-url', 'data-url': value.Url ?? '' },
      field(t('webhooks.url', { n }), url),
      h('fieldset', {}, h('legend', {}, t('webhooks.categories', { n })), ...boxes),
      remove,
    );
    remove.addEventListener('click', () => {
      entries.splice(entries.indexOf(entry), 1);
      item.remove();
      add.disabled = entries.length >= MAX_URLS;
    });
    if (saved && value.Url) item.append(recentDeliveries(value.Url));
    urls.append(item);
    add.disabled = entries.length >= MAX_URLS;
  }

  function recentDeliveries(url: string): HTMLElement {
    const local = resultLine('webhook-deliveries-result');
    const { table: list, body } = table(t('webhooks.recent', { url }), deliveryHeaders(false), 'webhook-deliveries');
    const empty = h('p', { class: 'empty' }, t('webhooks.noDeliveries'));
    const details = h('details', { class: 'recent' }, h('summary', {}, t('webhooks.recentSummary')), list, empty, local.el);
    const read = async (): Promise<void> => {
      try {
        const rows = await api.get<Delivery[]>(
          `${v2(tenant(), 'deliveries')}?${deliveriesQuery({ channel: 'Webhook', target: url, pageSize: 10 })}`,
        );
        replaceRows(body, rows.map((d) => deliveryRow(d, false, local, () => void read())), 'data-delivery');
        empty.hidden = rows.length > 0;
        list.hidden = rows.length === 0;
      } catch (e) {
        local.fail(e);
      }
    };
    details.addEventListener('toggle', () => {
      if (details.open) void read();
    });
    return details;
  }

  async function load(): Promise<void> {
    try {
      const response = await api.get<Response>(v2(tenant(), 'webhooks'), { raw: true });
      const settings = (await response.json()) as WebhookSettings;
      if (!alive) return;
      etag = response.headers.get('ETag');
      entries.length = 0;
      urls.replaceChildren();
      for (const u of settings.Urls ?? []) addUrl(u, true);
      auth.value = settings.Authentication ?? 'None';
      username.value = settings.Username ?? '';
      password.value = '';
      showAuthFields();
    } catch (e) {
      result.fail(e);
    }
  }

  add.addEventListener('click', () => {
    addUrl({}, false);
    entries[entries.length - 1]?.url.focus();
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    save.disabled = true;
    const body = {
      Urls: entries.map(({ url, flags }) => ({
        Url: url.value.trim(),
        ...Object.fromEntries(CATEGORIES.map((c) => [c, flags[c].checked])),
      })),
      Authentication: auth.value,
      Username: auth.value === 'Basic' ? username.value.trim() || null : null,
      Password: password.value || null,
    };
    void api
      .put(v2(tenant(), 'webhooks'), body, { headers: etag ? { 'If-Match': etag } : {} })
      .then(async () => {
        await load();
        result.ok(t('webhooks.saved'));
      })
      .catch((err: unknown) => result.fail(err))
      .finally(() => (save.disabled = false));
  });
  showAuthFields();
  // Nothing to change until the saved settings are in (they would replace it).
  add.disabled = save.disabled = true;
  void load().finally(() => {
    add.disabled = entries.length >= MAX_URLS;
    save.disabled = false;
  });
  return () => {
    alive = false;
  };
}
