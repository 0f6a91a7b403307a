// Pure choices the shell makes from the session and the tenant: the UI language, the
// working tenants offered, and a wall-clock time in the profile's zone as an instant.
import { chooseLanguage } from './i18n';

/** The profile's `UiLanguage`, else the tenant's `DefaultUiLanguage`, else the browser's. */
export function uiLanguage(
  profileLanguage: string | null | undefined,
  tenantLanguage: string | null | undefined,
  browserLanguages: readonly string[],
): string {
  return chooseLanguage([profileLanguage, tenantLanguage, ...browserLanguages]);
}

export interface TenantRecord {
  TenantCode?: string;
  Description?: string | null;
  ParentTenantCode?: string | null;
  DefaultUiLanguage?: string | null;
}

export interface TenantOption {
  code: string;
  label: string;
  depth: number;
}

/**
 * The caller's tenant then its descendants, each under its parent (depth for indenting).
 * A descendant whose parent is missing from the list is put at depth 1.
 */
export function tenantOptions(own: TenantRecord, descendants: readonly TenantRecord[]): TenantOption[] {
  const ownCode = own.TenantCode ?? '';
  const children = new Map<string, TenantRecord[]>();
  const known = new Set([ownCode, ...descendants.map((d) => d.TenantCode ?? '')]);
  for (const d of descendants) {
    const parent = d.ParentTenantCode && known.has(d.ParentTenantCode) ? d.ParentTenantCode : ownCode;
    children.set(parent, [...(children.get(parent) ?? []), d]);
  }
  const out: TenantOption[] = [];
  const seen = new Set<string>();
  const visit = (t: TenantRecord, depth: number): void => {
    const code = t.TenantCode ?? '';
    if (seen.has(code)) return;
    seen.add(code);
    out.push({ code, label: t.Description ? `${t.Description} (${code})` : code, depth });
    const below = [...(children.get(code) ?? [])].sort((a, b) =>
      (a.Description ?? '').localeCompare(b.Description ?? '') || (a.TenantCode ?? '').localeCompare(b.TenantCode ?? ''),
    );
    for (const c of below) visit(c, depth + 1);
  };
  visit(own, 0);
  return out;
}

/** `stored` if the caller may work there, else the caller's own tenant. */
export function workingChoice(stored: string | null | undefined, options: readonly TenantOption[], own: string): string {
  return stored && options.some((o) => o.code === stored) ? stored : own;
}

function offsetMinutes(zone: string, at: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit',
    hour: '2-digit', minute: '2-digit', second: '2-digit',
  }).formatToParts(new Date(at));
  const get = (type: string): number => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return Math.round((asUtc - Math.floor(at / 1000) * 1000) / 60000);
}

/**
 * A `datetime-local` value (`2026-03-01T10:00`) read in `zone` (the browser's when unset or
 * unknown), as an RFC 3339 instant; null when empty or unreadable.
 */
export function zonedInstant(local: string, zone?: string | null): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(local.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map((v) => Number(v ?? 0)) as [number, number, number, number, number, number];
  let valid = true;
  try {
    if (zone) new Intl.DateTimeFormat('en', { timeZone: zone });
  } catch {
    valid = false;
  }
  if (!zone || !valid) {
    const date = new Date(y, mo - 1, d, h, mi, s);
    return Number.isNaN(date.getTime()) ? null : date.toISOString();
  }
  const wall = Date.UTC(y, mo - 1, d, h, mi, s);
  // Two passes: the offset at the guess, then at the corrected instant (daylight saving).
  let at = wall - offsetMinutes(zone, wall) * 60000;
  at = wall - offsetMinutes(zone, at) * 60000;
  return new Date(at).toISOString();
}

/** The colour theme the operator chose: `system` follows the browser's `prefers-color-scheme`. */
export type Theme = 'system' | 'light' | 'dark';
export const THEMES: readonly Theme[] = ['system', 'light', 'dark'];
/** Where the choice is kept (`localStorage`); `scripts/make-theme-boot.mjs` reads the same key
 * before the first paint. */
export const THEME_KEY = 'safetrack.theme';

/** A stored value as a theme (anything else is `system`). */
export function themeChoice(stored: string | null | undefined): Theme {
  return stored === 'light' || stored === 'dark' ? stored : 'system';
}

/** The theme in effect: the choice, or the browser's scheme for `system`. */
export function effectiveTheme(choice: Theme, prefersDark: boolean): 'light' | 'dark' {
  return choice === 'system' ? (prefersDark ? 'dark' : 'light') : choice;
}
