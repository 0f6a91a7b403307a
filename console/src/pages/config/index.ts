// The configuration screens' routes. Each page is loaded when first opened (its own
// chunks: the draw plugin and the forms stay out of the alert queue's first load).
import type { Page } from '../../router';

/** A page whose module is imported on first use; leaving before it arrives shows nothing. */
export function lazyPage(load: () => Promise<Page>): Page {
  return (outlet, params) => {
    let left = false;
    let cleanup: (() => void) | void;
    void load().then((page) => {
      if (!left) cleanup = page(outlet, params);
    });
    return () => {
      left = true;
      if (typeof cleanup === 'function') cleanup();
    };
  };
}

export const configPages: ReadonlyArray<[string, Page]> = [
  ['/config/geofences', lazyPage(() => import('./geofences').then((m) => m.geofencesPage))],
  ['/config/notifications', lazyPage(() => import('./notifications').then((m) => m.notificationsPage))],
  ['/config/addressbook', lazyPage(() => import('./addressbook').then((m) => m.addressBookPage))],
];
