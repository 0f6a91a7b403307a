// What the caller's role may do, as the console offers it (docs/api.md, "Access"): the
// session answers the role and its permissions; what they do not allow is not offered.
// The API still refuses it — this only keeps controls that would fail out of sight.
import type { Session as FullSession } from './api';

/** What the role rules read of the session. */
type Session = Pick<FullSession, 'UserRoleId' | 'Permissions'>;

export type Permission =
  | 'ManageTenants'
  | 'ManageUsers'
  | 'ManageConfiguration'
  | 'AccessAllDevices'
  | 'DeviceMessages'
  | 'HandleAlerts'
  | 'ManageItineraries'
  | 'KeepOwnItineraries'
  | 'Read'
  | 'ReadAuditLog';

/** Most privileged first, as the API ranks them. */
export const ROLES = ['Administrator', 'Manager', 'User', 'ReadOnly'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: string | null | undefined): value is Role {
  return (ROLES as readonly string[]).includes(value ?? '');
}

function rank(role: Role): number {
  return ROLES.indexOf(role);
}

export function may(session: Session | null | undefined, permission: Permission): boolean {
  return session?.Permissions?.includes(permission) ?? false;
}

/** The caller's role; an API token (no role) ranks as its permissions allow. */
export function callerRole(session: Session | null | undefined): Role {
  const role = session?.UserRoleId;
  if (isRole(role)) return role;
  if (may(session, 'ManageTenants')) return 'Administrator';
  if (may(session, 'ManageUsers')) return 'Manager';
  if (may(session, 'HandleAlerts')) return 'User';
  return 'ReadOnly';
}

/** The roles the caller may give somebody: never one above its own. */
export function assignableRoles(session: Session | null | undefined): Role[] {
  if (!may(session, 'ManageUsers')) return [];
  const own = rank(callerRole(session));
  return ROLES.filter((r) => rank(r) >= own);
}

/** Whether the caller may change a user of `target` role (nobody manages a user above them). */
export function mayManageUser(session: Session | null | undefined, target: string | null | undefined): boolean {
  if (!may(session, 'ManageUsers')) return false;
  return !isRole(target) || rank(target) >= rank(callerRole(session));
}

/** A navigation entry, and what the caller needs for it to be offered. */
export interface NavEntry {
  path: string;
  needs: Permission;
}

export function offered<T extends NavEntry>(entries: readonly T[], session: Session | null | undefined): T[] {
  return entries.filter((e) => may(session, e.needs));
}
