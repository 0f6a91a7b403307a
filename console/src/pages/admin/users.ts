// Users of the working tenant: list; create, change role, disable/enable and reset a
// password where the caller's role allows (docs/api.md, "Access").
import { api, v2 } from '../../api';
import { h, replaceRows } from '../../dom';
import { t, type Key } from '../../i18n';
import { formatDateTime } from '../../format';
import { session, tenant } from '../../session';
import { assignableRoles, isRole, may, mayManageUser, type Role } from '../../roles';
import { cell, checkbox, field, page, resultLine, select, table, uid } from './common';

interface UserRecord {
  UserId?: string;
  Username?: string;
  FirstName?: string | null;
  LastName?: string | null;
  UserRoleId?: string | null;
  IsDisabled?: boolean;
  IsPortalEnabled?: boolean;
  LastLoggedIn?: string | null;
}

const roleLabel = (r: string | null | undefined): string => (isRole(r) ? t(`role.${r}` as Key) : r ?? '');

export function usersPage(outlet: HTMLElement): () => void {
  const s = session();
  const result = resultLine('users-result');
  const cols = ['username', 'name', 'role', 'state', 'lastLogin', 'actions'] as const;
  const { table: list, body } = table(t('users.heading'), cols.map((c) => t(`users.col.${c}` as Key)), 'users');
  const roles = assignableRoles(s);
  const create = may(s, 'ManageUsers') ? createForm(roles, () => void load(), result) : null;
  outlet.append(page('users-page', t('users.heading'), create, result.el, list));

  let alive = true;
  let reads = 0;
  async function load(): Promise<void> {
    // Changes made one after another start reloads that may answer out of order: only
    // the last one started is drawn.
    const read = ++reads;
    try {
      const users = await api.all<UserRecord>(v2(tenant(), 'users'));
      if (!alive || read !== reads) return;
      // What is being typed into a row (a new password, a role) stays through the reload.
      replaceRows(body, users.map((u) => row(u, roles, () => void load(), result)), 'data-user');
    } catch (e) {
      result.fail(e);
    }
  }
  void load();
  return () => {
    alive = false;
  };
}

function createForm(roles: Role[], reload: () => void, result: ReturnType<typeof resultLine>): HTMLElement {
  const username = h('input', { type: 'email', required: true, autocomplete: 'off' });
  const first = h('input', { autocomplete: 'off' });
  const last = h('input', { autocomplete: 'off' });
  const password = h('input', { type: 'password', required: true, autocomplete: 'new-password' });
  const role = select(roles.map((r) => [r, roleLabel(r)]), roles.includes('User') ? 'User' : roles[roles.length - 1] ?? '');
  const portal = checkbox(t('users.portal'), true);
  const submit = h('button', { type: 'submit' }, t('users.create'));
  const headingId = uid('h');
  const form = h(
    'form',
    { class: 'admin-form', 'data-testid': 'user-create', 'aria-labelledby': headingId },
    h('h2', { id: headingId }, t('users.createHeading')),
    field(t('users.username'), username),
    field(t('users.firstName'), first),
    field(t('users.lastName'), last),
    field(t('users.password'), password),
    field(t('users.role'), role),
    portal.wrap,
    submit,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    submit.disabled = true;
    void api
      .post(v2(tenant(), 'users'), {
        Username: username.value.trim(),
        FirstName: first.value.trim() || null,
        LastName: last.value.trim() || null,
        Password: password.value,
        UserRoleId: role.value,
        IsPortalEnabled: portal.input.checked,
      })
      .then(() => {
        result.ok(t('users.created', { username: username.value.trim() }));
        form.reset();
        reload();
      })
      .catch((err: unknown) => result.fail(err))
      .finally(() => (submit.disabled = false));
  });
  return form;
}

function row(u: UserRecord, roles: Role[], reload: () => void, result: ReturnType<typeof resultLine>): HTMLElement {
  const s = session();
  const name = [u.FirstName, u.LastName].filter(Boolean).join(' ');
  const path = v2(tenant(), 'users', u.UserId ?? u.Username ?? '');
  const actions = h('div', { class: 'row-actions' });
  const who = u.Username ?? '';
  if (mayManageUser(s, u.UserRoleId) && u.UserId !== s?.UserId) {
    const patch = (ops: unknown[], done: string, after?: () => void): void => {
      void api
        .patch(path, ops)
        .then(() => {
          result.ok(done);
          after?.();
          reload();
        })
        .catch((err: unknown) => result.fail(err));
    };
    const role = select(roles.map((r) => [r, roleLabel(r)]), u.UserRoleId ?? '', { 'aria-label': t('users.roleOf', { username: who }) });
    const saveRole = h('button', { type: 'button' }, t('users.saveRole'));
    saveRole.setAttribute('aria-label', t('users.saveRoleOf', { username: who }));
    saveRole.addEventListener('click', () =>
      patch([{ op: 'replace', path: '/UserRoleId', value: role.value }], t('users.roleSaved', { username: who })),
    );
    const disable = h('button', { type: 'button', 'data-action': u.IsDisabled ? 'enable' : 'disable' }, u.IsDisabled ? t('users.enable') : t('users.disable'));
    disable.setAttribute('aria-label', t(u.IsDisabled ? 'users.enableOf' : 'users.disableOf', { username: who }));
    disable.addEventListener('click', () =>
      patch([{ op: 'replace', path: '/IsDisabled', value: !u.IsDisabled }], t(u.IsDisabled ? 'users.enabled' : 'users.disabled', { username: who })),
    );
    const password = h('input', { type: 'password', autocomplete: 'new-password', 'aria-label': t('users.newPasswordOf', { username: who }) });
    const reset = h('button', { type: 'button' }, t('users.resetPassword'));
    reset.setAttribute('aria-label', t('users.resetPasswordOf', { username: who }));
    reset.addEventListener('click', () => {
      if (!password.value) {
        password.focus();
        return;
      }
      const sent = password.value;
      patch([{ op: 'replace', path: '/Password', value: sent }], t('users.passwordReset', { username: who }), () => {
        // The field that holds it now (a reload may have redrawn the row), and only if
        // nothing else was typed since.
        const now = password.isConnected
          ? password
          : document.querySelector<HTMLInputElement>(`tr[data-user="${CSS.escape(who)}"] input[type=password]`);
        if (now?.value === sent) now.value = '';
      });
    });
    actions.append(
      h('span', { class: 'inline' }, role, saveRole),
      disable,
      h('span', { class: 'inline' }, password, reset),
    );
  }
  return h(
    'tr',
    // The role as stored, so a reload after a change can be waited for.
    { 'data-user': who, 'data-role': u.UserRoleId ?? '' },
    cell(t('users.col.username'), who),
    cell(t('users.col.name'), name),
    cell(t('users.col.role'), roleLabel(u.UserRoleId)),
    cell(t('users.col.state'), u.IsDisabled ? t('users.stateDisabled') : t('users.stateActive')),
    cell(t('users.col.lastLogin'), formatDateTime(u.LastLoggedIn)),
    cell(t('users.col.actions'), actions),
  );
}
