// Users of the working tenant: one paged read of the list (continuation tokens), searched
// and paged in memory; create, change role, disable/enable and reset a password where the
// caller's role allows (docs/api.md, "Access"); and a worker's profile — phones,
// emergency contacts, information for responders — viewed, and edited by a manager.
import { api, v2 } from '../../api';
import { h, replaceRows } from '../../dom';
import { t, type Key } from '../../i18n';
import { formatDateTime } from '../../format';
import { session, tenant } from '../../session';
import { assignableRoles, isRole, may, mayManageUser, type Role } from '../../roles';
import { pageBounds } from '../../devices';
import { checkbox, field, page, plainAddress, resultLine, select, table, uid } from './common';

interface UserRecord {
  UserId?: string;
  TenantCode?: string | null;
  Username?: string;
  FirstName?: string | null;
  LastName?: string | null;
  UserRoleId?: string | null;
  IsDisabled?: boolean;
  IsPortalEnabled?: boolean;
  LastLoggedIn?: string | null;
}

/** Users shown on one page of the list. */
export const USERS_PAGE = 50;
/** Users per API page while reading the list. */
const READ_PAGE = 1000;

const roleLabel = (r: string | null | undefined): string => (isRole(r) ? t(`role.${r}` as Key) : r ?? '');

/** Whether a user matches the search: part of the login, first or last name (any case). */
export function userMatches(u: Pick<UserRecord, 'Username' | 'FirstName' | 'LastName'>, text: string): boolean {
  const wanted = text.trim().toLowerCase();
  if (!wanted) return true;
  const name = [u.FirstName, u.LastName].filter(Boolean).join(' ');
  return [u.Username ?? '', name].some((s) => s.toLowerCase().includes(wanted));
}

/** The profile fields the page shows and edits, in order, with their catalogue labels. */
export const PROFILE_FIELDS = [
  'CellPhone',
  'DaytimePhone',
  'EveningPhone',
  'EmergencyContactName',
  'EmergencyContactTelephoneNumber',
  'EmergencyContactAddress',
  'EmergencyContactName2',
  'EmergencyContactTelephoneNumber2',
  'EmergencyContactAddress2',
  'EmergencyInformation',
] as const;
type ProfileField = (typeof PROFILE_FIELDS)[number];
type Profile = Partial<Record<ProfileField, string | null>> & Record<string, unknown>;

export function usersPage(outlet: HTMLElement): () => void {
  const s = session();
  const result = resultLine('users-result');
  const cols = ['username', 'name', 'role', 'state', 'lastLogin', 'actions'] as const;
  const { table: list, body } = table(t('users.heading'), cols.map((c) => t(`users.col.${c}` as Key)), 'users');
  const roles = assignableRoles(s);
  const create = may(s, 'ManageUsers') ? createForm(roles, () => void load(), result) : null;
  const query = new URLSearchParams(location.search);
  const search = h('input', { type: 'search', id: uid('user-search'), autocomplete: 'off', 'data-testid': 'user-search' });
  search.value = query.get('q') ?? '';
  const searchForm = h('form', { role: 'search', class: 'device-filters' }, h('label', { for: search.id }, t('users.search')), search);
  searchForm.addEventListener('submit', (e) => e.preventDefault());
  const count = h('p', { class: 'count', role: 'status', 'data-testid': 'user-count' }, t('users.loading'));
  const previous = h('button', { type: 'button', 'data-testid': 'users-previous' }, t('devices.page.previous'));
  const next = h('button', { type: 'button', 'data-testid': 'users-next' }, t('devices.page.next'));
  const where = h('span', { 'data-testid': 'users-where' });
  const pager = h('nav', { class: 'pager', 'aria-label': t('users.pages') }, previous, where, next);
  const profile = h('div', { 'data-testid': 'user-profile-slot' });
  outlet.append(page('users-page', t('users.heading'), create, result.el, searchForm, count, list, pager, profile));

  let alive = true;
  let reads = 0;
  let users: UserRecord[] = [];
  let shownPage = 0;
  const draw = (): void => {
    const found = users.filter((u) => userMatches(u, search.value));
    const bounds = pageBounds(found.length, shownPage, USERS_PAGE);
    shownPage = bounds.page;
    // What is being typed into a row (a new password, a role) stays through the reload.
    replaceRows(body, found.slice(bounds.start, bounds.end).map((u) => row(u, roles, () => void load(), result, openProfile)), 'data-user');
    count.textContent = t('users.count', { shown: found.length, total: users.length });
    where.textContent = t('devices.page.where', { page: bounds.page + 1, pages: bounds.pages });
    previous.disabled = bounds.page === 0;
    next.disabled = bounds.page >= bounds.pages - 1;
  };
  search.addEventListener('input', () => {
    shownPage = 0;
    draw();
  });
  previous.addEventListener('click', () => {
    shownPage -= 1;
    draw();
  });
  next.addEventListener('click', () => {
    shownPage += 1;
    draw();
  });
  const openProfile = (u: UserRecord): void => {
    profile.replaceChildren(profilePanel(u, result));
    profile.querySelector<HTMLElement>('h2')?.focus();
  };

  async function load(): Promise<void> {
    // Changes made one after another start reloads that may answer out of order: only
    // the last one started is drawn.
    const read = ++reads;
    try {
      const all = await api.all<UserRecord>(`${v2(tenant(), 'users')}?pageSize=${READ_PAGE}`);
      if (!alive || read !== reads) return;
      users = all;
      draw();
    } catch (e) {
      result.fail(e);
    }
  }
  void load().then(() => {
    // `?user=tenant/id` (the device page's link) opens that person's profile.
    const wanted = query.get('user');
    const [tc, id] = wanted ? [wanted.slice(0, wanted.indexOf('/')), wanted.slice(wanted.indexOf('/') + 1)] : ['', ''];
    if (!alive || !id) return;
    const known = users.find((u) => u.UserId === id);
    openProfile(known ?? { UserId: id, TenantCode: tc });
  });
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
  // Console access is given on purpose, never by default: most workers only carry a device.
  const portal = checkbox(t('users.portal'), false, { 'data-testid': 'user-portal' });
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

function row(
  u: UserRecord,
  roles: Role[],
  reload: () => void,
  result: ReturnType<typeof resultLine>,
  openProfile: (u: UserRecord) => void,
): HTMLElement {
  const s = session();
  const name = [u.FirstName, u.LastName].filter(Boolean).join(' ');
  const path = v2(tenant(), 'users', u.UserId ?? u.Username ?? '');
  const who = u.Username ?? '';
  const profileButton = h('button', { type: 'button', 'data-action': 'profile' }, t('users.profile'));
  profileButton.setAttribute('aria-label', t('users.profileOf', { username: who }));
  profileButton.addEventListener('click', () => openProfile(u));
  const actions = h('div', { class: 'row-actions' }, profileButton);
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
    // One password per form, beside the account it is for (what password managers read).
    const password = h('input', { type: 'password', required: true, autocomplete: 'new-password', 'aria-label': t('users.newPasswordOf', { username: who }) });
    const reset = h('button', { type: 'submit' }, t('users.resetPassword'));
    reset.setAttribute('aria-label', t('users.resetPasswordOf', { username: who }));
    const resetForm = h(
      'form',
      { class: 'inline', 'data-testid': 'password-form' },
      h('input', { type: 'text', autocomplete: 'username', value: who, hidden: true, readonly: true, tabindex: -1, 'aria-hidden': 'true' }),
      password,
      reset,
    );
    resetForm.addEventListener('submit', (e) => {
      e.preventDefault();
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
    actions.append(h('span', { class: 'inline' }, role, saveRole), disable, resetForm);
  }
  return h(
    'tr',
    // The role as stored, so a reload after a change can be waited for.
    { 'data-user': who, 'data-role': u.UserRoleId ?? '' },
    h('td', { 'data-label': t('users.col.username') }, who),
    h('td', { 'data-label': t('users.col.name') }, name),
    h('td', { 'data-label': t('users.col.role') }, roleLabel(u.UserRoleId)),
    h('td', { 'data-label': t('users.col.state') }, u.IsDisabled ? t('users.stateDisabled') : t('users.stateActive')),
    h('td', { 'data-label': t('users.col.lastLogin') }, formatDateTime(u.LastLoggedIn)),
    h('td', { 'data-label': t('users.col.actions') }, actions),
  );
}

/** A worker's profile: read, and saved whole (PUT) by a caller allowed to change it. */
function profilePanel(u: UserRecord, result: ReturnType<typeof resultLine>): HTMLElement {
  const s = session();
  const tc = u.TenantCode || tenant();
  const path = v2(tc, 'userprofile', u.UserId ?? u.Username ?? '');
  const headingId = uid('profile-h');
  const heading = h('h2', { id: headingId, tabindex: -1 }, t('users.profileHeading', { username: u.Username ?? u.UserId ?? '' }));
  const editable = (may(s, 'ManageUsers') && mayManageUser(s, u.UserRoleId)) || u.UserId === s?.UserId;
  const inputs = new Map<ProfileField, HTMLInputElement | HTMLTextAreaElement>();
  const fields = PROFILE_FIELDS.map((f) => {
    const phone = f.endsWith('Phone') || f.includes('TelephoneNumber');
    const control =
      f === 'EmergencyInformation'
        ? h('textarea', { rows: 3, name: f, 'data-field': f, readonly: !editable })
        : h('input', { type: phone ? 'tel' : 'text', name: f, 'data-field': f, autocomplete: 'off', readonly: !editable });
    inputs.set(f, control);
    return field(t(`field.${f}` as Key), control, phone ? t('profile.phoneHint') : undefined);
  });
  const save = h('button', { type: 'submit', hidden: !editable }, t('users.saveProfile'));
  const close = h('button', { type: 'button' }, t('users.closeProfile'));
  const form = h(
    'form',
    { class: 'admin-form profile-form', 'data-testid': 'user-profile', 'aria-labelledby': headingId },
    heading,
    h('fieldset', {}, h('legend', {}, t('users.phones')), ...fields.slice(0, 3)),
    h('fieldset', {}, h('legend', {}, t('users.contact1')), ...fields.slice(3, 6)),
    h('fieldset', {}, h('legend', {}, t('users.contact2')), ...fields.slice(6, 9)),
    fields[9] ?? '',
    h('div', { class: 'buttons' }, save, close),
  );
  form.setAttribute('aria-busy', 'true');
  close.addEventListener('click', () => form.remove());
  let stored: Profile | null = null;
  void api
    .get<Profile>(path)
    .then((p) => {
      stored = p;
      for (const [f, control] of inputs) control.value = f.startsWith('EmergencyContactAddress') ? plainAddress(p[f]) : (p[f] ?? '');
      form.dataset.loaded = 'true';
    })
    .catch((e: unknown) => result.fail(e))
    .finally(() => form.removeAttribute('aria-busy'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (!stored) return;
    const changed: Profile = { ...stored };
    for (const [f, control] of inputs) {
      // An address shown without its `mail:`/`sms:` prefix is kept as stored when untouched.
      const shown = f.startsWith('EmergencyContactAddress') ? plainAddress(stored[f]) : (stored[f] ?? '');
      if (control.value !== shown) changed[f] = control.value.trim() || null;
    }
    save.disabled = true;
    void api
      .put(path, changed)
      .then(() => {
        stored = changed;
        result.ok(t('users.profileSaved', { username: u.Username ?? '' }));
      })
      .catch((err: unknown) => result.fail(err))
      .finally(() => (save.disabled = false));
  });
  return form;
}
