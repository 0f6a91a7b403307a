// The tenant switcher: for a caller with subtenants, a choice of the working tenant among
// its subtree (read through the API). The choice is kept per tab; pages read `tenant()`.
import { api, v2 } from './api';
import { h } from './dom';
import { t } from './i18n';
import { ownTenant, setWorkingTenant, tenant } from './session';
import { tenantOptions, workingChoice, type TenantRecord } from './preferences';

let own: Promise<TenantRecord | null> | null = null;
let ownFor = '';

/** The caller's own tenant record, read once per login (null when it cannot be read). */
export function readOwnTenant(): Promise<TenantRecord | null> {
  if (!own || ownFor !== ownTenant()) {
    ownFor = ownTenant();
    own = api.get<TenantRecord>(v2(ownFor)).catch(() => null);
  }
  return own;
}

/** The switcher (hidden until the subtree is known to hold more than the caller's tenant). */
export function tenantSwitcher(onChange: () => void): HTMLElement {
  const choice = h('select', { id: 'working-tenant', 'data-testid': 'tenant-switcher' });
  const wrap = h('span', { class: 'tenant-switcher', hidden: true }, h('label', { for: 'working-tenant' }, t('tenant.working')), choice);
  void (async () => {
    const mine = (await readOwnTenant()) ?? { TenantCode: ownTenant() };
    const below = await api.get<TenantRecord[]>(`${v2(ownTenant(), 'tenants')}?subtenants=true`).catch(() => []);
    const options = tenantOptions(mine, below);
    const chosen = workingChoice(tenant(), options, ownTenant());
    if (chosen !== tenant()) {
      setWorkingTenant(chosen);
      onChange();
    }
    choice.replaceChildren(
      ...options.map((o) => h('option', { value: o.code }, `${'\u2003'.repeat(o.depth)}${o.label}`)),
    );
    choice.value = chosen;
    wrap.hidden = options.length < 2;
  })();
  choice.addEventListener('change', () => {
    setWorkingTenant(choice.value);
    onChange();
  });
  return wrap;
}
