// API tokens of the working tenant: list, create (the secret shown once, with a copy
// control; it lives in this page only and is gone on reload), revoke.
import { api, v2 } from '../../api';
import { h, replaceRows } from '../../dom';
import { t, type Key } from '../../i18n';
import { formatDateTime } from '../../format';
import { session, tenant } from '../../session';
import { may, type Permission } from '../../roles';
import { zonedInstant } from '../../preferences';
import { cell, checkbox, field, page, resultLine, table } from './common';

interface ApiToken {
  TokenId?: string;
  Name?: string;
  Prefix?: string;
  Permissions?: string[];
  CreatedBy?: string;
  CreatedAt?: string;
  ExpiresAt?: string | null;
  LastUsedAt?: string | null;
  Token?: string;
}

export function tokensPage(outlet: HTMLElement): () => void {
  const s = session();
  const manage = may(s, 'ManageConfiguration');
  const result = resultLine('tokens-result');
  const secret = h('div', { class: 'secret', 'data-testid': 'token-secret', hidden: true });
  const cols = ['name', 'prefix', 'permissions', 'createdBy', 'createdAt', 'expiresAt', 'lastUsedAt', 'actions'] as const;
  const { table: list, body } = table(t('tokens.heading'), cols.map((c) => t(`tokens.col.${c}` as Key)), 'tokens');
  outlet.append(page('tokens-page', t('tokens.heading'), manage ? createForm(showSecret, () => void load(), result) : null, secret, result.el, list));

  function showSecret(token: ApiToken): void {
    const value = h('code', { 'data-testid': 'token-secret-value' }, token.Token ?? '');
    const copy = h('button', { type: 'button' }, t('tokens.copy'));
    const copied = h('span', { 'aria-live': 'polite', class: 'hint' });
    copy.addEventListener('click', () => {
      void navigator.clipboard
        ?.writeText(token.Token ?? '')
        .then(() => (copied.textContent = t('tokens.copied')))
        .catch(() => {
          // No clipboard (not a secure context): select the text for the user to copy.
          const range = document.createRange();
          range.selectNodeContents(value);
          window.getSelection()?.removeAllRanges();
          window.getSelection()?.addRange(range);
          copied.textContent = t('tokens.copyManually');
        });
    });
    secret.replaceChildren(
      h('p', { role: 'status' }, t('tokens.secretOnce', { name: token.Name ?? '' })),
      value,
      ' ',
      copy,
      ' ',
      copied,
    );
    secret.hidden = false;
  }

  let alive = true;
  async function load(): Promise<void> {
    try {
      const tokens = await api.get<ApiToken[]>(v2(tenant(), 'apitokens'));
      if (!alive) return;
      replaceRows(body, tokens.map((tk) => row(tk, manage, () => void load(), result)), 'data-token-id');
    } catch (e) {
      result.fail(e);
    }
  }
  void load();
  return () => {
    alive = false;
  };
}

const PERMISSIONS: Permission[] = [
  'Read', 'DeviceMessages', 'HandleAlerts', 'AccessAllDevices', 'ManageConfiguration', 'ManageUsers',
  'ManageItineraries', 'KeepOwnItineraries', 'ManageTenants', 'ReadAuditLog',
];

function createForm(onCreated: (t: ApiToken) => void, reload: () => void, result: ReturnType<typeof resultLine>): HTMLElement {
  const own = session()?.Permissions ?? [];
  const name = h('input', { required: true, autocomplete: 'off' });
  const expires = h('input', { type: 'datetime-local' });
  const boxes = PERMISSIONS.filter((p) => own.includes(p)).map((p) => ({ p, box: checkbox(t(`perm.${p}` as Key), p === 'Read', { 'data-permission': p }) }));
  const submit = h('button', { type: 'submit' }, t('tokens.create'));
  const form = h(
    'form',
    { class: 'admin-form', 'data-testid': 'token-create' },
    h('h2', {}, t('tokens.createHeading')),
    field(t('tokens.name'), name),
    h('fieldset', {}, h('legend', {}, t('tokens.permissions')), ...boxes.map((b) => b.box.wrap)),
    field(t('tokens.expiresAt'), expires, t('tokens.expiresHint')),
    submit,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    submit.disabled = true;
    const permissions = boxes.filter((b) => b.box.input.checked).map((b) => b.p);
    void api
      .post<ApiToken>(v2(tenant(), 'apitokens'), {
        Name: name.value.trim(),
        Permissions: permissions.length ? permissions : undefined,
        ExpiresAt: expires.value ? zonedInstant(expires.value, session()?.TimeZoneId) : undefined,
      })
      .then((created) => {
        onCreated(created);
        result.clear();
        form.reset();
        reload();
      })
      .catch((err: unknown) => result.fail(err))
      .finally(() => (submit.disabled = false));
  });
  return form;
}

function row(tk: ApiToken, manage: boolean, reload: () => void, result: ReturnType<typeof resultLine>): HTMLElement {
  const actions = h('div', { class: 'row-actions' });
  if (manage) {
    const revoke = h('button', { type: 'button', 'aria-label': t('tokens.revokeOf', { name: tk.Name ?? '' }) }, t('tokens.revoke'));
    revoke.addEventListener('click', () => {
      if (!window.confirm(t('tokens.confirmRevoke', { name: tk.Name ?? '' }))) return;
      void api
        .delete(v2(tenant(), 'apitokens', tk.TokenId ?? ''))
        .then(() => {
          result.ok(t('tokens.revoked', { name: tk.Name ?? '' }));
          reload();
        })
        .catch((err: unknown) => result.fail(err));
    });
    actions.append(revoke);
  }
  return h(
    'tr',
    { 'data-token': tk.Name ?? '', 'data-token-id': tk.TokenId ?? '' },
    cell(t('tokens.col.name'), tk.Name ?? ''),
    cell(t('tokens.col.prefix'), h('code', {}, `${tk.Prefix ?? ''}…`)),
    cell(t('tokens.col.permissions'), (tk.Permissions ?? []).map((p) => (PERMISSIONS.includes(p as Permission) ? t(`perm.${p}` as Key) : p)).join(', ')),
    cell(t('tokens.col.createdBy'), tk.CreatedBy ?? ''),
    cell(t('tokens.col.createdAt'), formatDateTime(tk.CreatedAt)),
    cell(t('tokens.col.expiresAt'), tk.ExpiresAt ? formatDateTime(tk.ExpiresAt) : t('tokens.never')),
    cell(t('tokens.col.lastUsedAt'), tk.LastUsedAt ? formatDateTime(tk.LastUsedAt) : t('tokens.never')),
    cell(t('tokens.col.actions'), actions),
  );
}
