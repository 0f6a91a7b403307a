// The admin area's pages and navigation entries (each offered only to a caller whose
// permissions allow it; the API still refuses what they do not).
import type { Key } from '../../i18n';
import type { Page } from '../../router';
import type { NavEntry } from '../../roles';
import { reportsPage } from './reports';
import { usersPage } from './users';
import { tokensPage } from './tokens';
import { webhooksPage } from './webhooks';
import { deliveriesPage } from './deliveries';

export interface AdminEntry extends NavEntry {
  label: Key;
  page: Page;
}

export const ADMIN_PAGES: readonly AdminEntry[] = [
  { path: '/reports', needs: 'Read', label: 'nav.reports', page: reportsPage },
  { path: '/users', needs: 'Read', label: 'nav.users', page: usersPage },
  // Listing tokens needs what creating and revoking them need (the API answers 403).
  { path: '/tokens', needs: 'ManageConfiguration', label: 'nav.tokens', page: tokensPage },
  { path: '/webhooks', needs: 'ManageConfiguration', label: 'nav.webhooks', page: webhooksPage },
  { path: '/deliveries', needs: 'Read', label: 'nav.deliveries', page: deliveriesPage },
];
