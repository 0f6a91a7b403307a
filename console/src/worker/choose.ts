// Which device the worker acts for: the devices assigned to the logged-in user
// (`Device.UserId`), read from the caller's own tenant with its subtenants (`userId=`). One: that one;
// several: the person chooses (kept in the browser); none: say plainly who must assign one.
import { api, v2, type Device, type Session } from '../api';
import { h } from '../dom';
import { t } from '../i18n';

const CHOICE_KEY = 'safetrack.worker.device';

/** The devices assigned to `userId`, by name. */
export function assignedTo(devices: readonly Device[], userId: string | null | undefined): Device[] {
  if (!userId) return [];
  return devices
    .filter((d) => d.UserId === userId)
    .sort((a, b) => deviceName(a).localeCompare(deviceName(b)));
}

export function deviceName(d: Pick<Device, 'FriendlyName' | 'DeviceId'>): string {
  return d.FriendlyName?.trim() || d.DeviceId;
}

function choiceKey(d: Pick<Device, 'TenantCode' | 'DeviceId'>): string {
  return `${d.TenantCode ?? ''}/${d.DeviceId}`;
}

export async function readAssigned(s: Session): Promise<Device[]> {
  if (!s.UserId) return [];
  // The server filters (`userId`), so a phone never downloads the whole tenant's devices.
  const query = `?subtenants=true&userId=${encodeURIComponent(s.UserId)}`;
  const mine = await api.all<Device>(`${v2(s.TenantCode, 'devices')}${query}`);
  return assignedTo(mine, s.UserId);
}

export function rememberChoice(d: Device | null): void {
  try {
    if (d) localStorage.setItem(CHOICE_KEY, choiceKey(d));
    else localStorage.removeItem(CHOICE_KEY);
  } catch {
    // Storage refused: asked again next time.
  }
}

export function rememberedChoice(devices: readonly Device[]): Device | null {
  if (devices.length === 1) return devices[0] ?? null;
  let held: string | null = null;
  try {
    held = localStorage.getItem(CHOICE_KEY);
  } catch {
    held = null;
  }
  return devices.find((d) => choiceKey(d) === held) ?? null;
}

/** The choice page: a big button per device, or the plain "none" and a retry. */
export function choosePage(outlet: HTMLElement, s: Session, devices: readonly Device[], chosen: (d: Device) => void, retry: () => void): void {
  if (devices.length === 0) {
    outlet.append(
      h(
        'main',
        { class: 'worker-main' },
        h('p', { class: 'worker-notice', role: 'alert', 'data-testid': 'no-device' }, t('worker.none', { user: s.Username })),
        h('button', { type: 'button', class: 'worker-wide', onclick: retry }, t('worker.retry')),
      ),
    );
    return;
  }
  outlet.append(
    h(
      'main',
      { class: 'worker-main' },
      h('h1', {}, t('worker.chooseHeading')),
      ...devices.map((d) =>
        h('button', {
          type: 'button',
          class: 'worker-wide',
          'data-device': choiceKey(d),
          onclick: () => {
            rememberChoice(d);
            chosen(d);
          },
        }, t('worker.choose', { name: deviceName(d) })),
      ),
    ),
  );
}
