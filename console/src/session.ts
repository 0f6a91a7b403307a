// Who is logged in, and the login/logout calls (POST/GET/DELETE /auth/session).
import { api, ApiError, ForbiddenError, NetworkError, UnauthorizedError, type Session } from './api';

let current: Session | null = null;

export function session(): Session | null {
  return current;
}

/** The caller's own tenant: the live stream and the alert queue cover it with subtenants. */
export function ownTenant(): string {
  return current?.TenantCode ?? '';
}

// The working tenant chosen with the tenant switcher: per tab (sessionStorage), per user.
const WORKING_KEY = 'safetrack.workingTenant';
let working: string | null = null;

function storedWorking(s: Session): string | null {
  try {
    const held = JSON.parse(sessionStorage.getItem(WORKING_KEY) ?? 'null') as { user?: string; code?: string } | null;
    return held && held.user === s.Username && held.code ? held.code : null;
  } catch {
    return null;
  }
}

/** The working tenant every page lists and writes in: the chosen one, else the caller's own. */
export function tenant(): string {
  return working ?? ownTenant();
}

/** Chooses the working tenant (null or the caller's own: back to it) for this tab. */
export function setWorkingTenant(code: string | null): void {
  working = code && code !== ownTenant() ? code : null;
  try {
    if (working) sessionStorage.setItem(WORKING_KEY, JSON.stringify({ user: current?.Username, code: working }));
    else sessionStorage.removeItem(WORKING_KEY);
  } catch {
    // Storage refused (private mode): the choice lasts until reload.
  }
}

/**
 * The session's CSRF token comes in the login's answer and in `GET /auth/session`'s
 * (a reload or another tab asks again), so it lives in memory only.
 */
function adopt(s: Session): Session {
  current = s;
  working = storedWorking(s);
  api.setCsrf(s.CsrfToken);
  return s;
}

/** The open session, or null when there is none (401). */
export async function loadSession(): Promise<Session | null> {
  try {
    return adopt(await api.get<Session>('/auth/session'));
  } catch (e) {
    if (e instanceof UnauthorizedError || e instanceof ForbiddenError) return null;
    throw e;
  }
}

export type LoginFailure = 'invalid' | 'locked' | 'noPortal' | 'network' | 'other';

export async function login(
  username: string,
  password: string,
): Promise<{ ok: true; session: Session } | { ok: false; why: LoginFailure; detail: string }> {
  try {
    const s = await api.post<Session>('/auth/session', { Username: username, Password: password });
    return { ok: true, session: adopt(s ?? (await api.get<Session>('/auth/session'))) };
  } catch (e) {
    if (e instanceof NetworkError) return { ok: false, why: 'network', detail: e.message };
    if (!(e instanceof ApiError)) throw e;
    if (e.code === 'locked') return { ok: false, why: 'locked', detail: e.message };
    if (e instanceof ForbiddenError) return { ok: false, why: 'noPortal', detail: e.message };
    if (e instanceof UnauthorizedError) return { ok: false, why: 'invalid', detail: e.message };
    return { ok: false, why: 'other', detail: e.message };
  }
}

export async function logout(): Promise<void> {
  try {
    await api.delete('/auth/session');
  } finally {
    current = null;
    working = null;
    api.setCsrf(undefined);
  }
}
