// Web Push for the worker app (issue 46 §2): the service worker (sw.ts) subscribes with the
// server's VAPID public key (`GET …/pushsubscriptions/vapidpublickey`) and the page gives
// the subscription to the API (`POST …/pushsubscriptions`, for this device), so reminders,
// operators' texts and acknowledgements reach the phone with the app closed; sw.ts shows
// each as a notification. Permission is asked only from the person's own tap.
import { api, v2, type Device } from '../api';
import { h } from '../dom';
import { t } from '../i18n';

export type PushState = 'on' | 'denied' | 'unsupported' | 'failed';

/** base64url (padding optional) to bytes, for `applicationServerKey`. */
export function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  const bytes = new Uint8Array(new ArrayBuffer(binary.length));
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** What the API takes: the subscription's `toJSON()` in its PascalCase, for the device. */
export function subscriptionBody(json: PushSubscriptionJSON, deviceId: string): Record<string, unknown> {
  return {
    Endpoint: json.endpoint,
    Keys: { P256dh: json.keys?.['p256dh'], Auth: json.keys?.['auth'] },
    DeviceId: deviceId,
  };
}

export function pushSupported(): boolean {
  return 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
}

/** Subscribes (or keeps the subscription this browser has) and tells the server. */
export async function enablePush(device: Device): Promise<PushState> {
  if (!pushSupported()) return 'unsupported';
  const permission = Notification.permission === 'granted' ? 'granted' : await Notification.requestPermission();
  if (permission !== 'granted') return 'denied';
  const tenant = device.TenantCode ?? '';
  const registration = await navigator.serviceWorker.ready;
  let subscription = await registration.pushManager.getSubscription();
  if (!subscription) {
    const key = await api.get<{ PublicKey: string }>(v2(tenant, 'pushsubscriptions', 'vapidpublickey'));
    subscription = await registration.pushManager.subscribe({
      userVisibleOnly: true,
      applicationServerKey: fromBase64Url(key.PublicKey),
    });
  }
  await api.post(v2(tenant, 'pushsubscriptions'), subscriptionBody(subscription.toJSON(), device.DeviceId));
  return 'on';
}

/** The header's notifications control: a button while permission is unasked, a word once
 * on; already granted, the subscription is renewed quietly. None without push support. */
export function pushControl(device: Device): HTMLElement | null {
  if (!pushSupported()) return null;
  const status = h('span', { class: 'worker-push', role: 'status', 'data-testid': 'push-status' });
  const say = (state: PushState, detail = ''): void => {
    status.replaceChildren(
      state === 'on' ? t('worker.push.on') : state === 'denied' ? t('worker.push.denied') : state === 'failed' ? t('worker.push.failed', { detail }) : '',
    );
  };
  const run = (): void => {
    void enablePush(device)
      .then((state) => say(state))
      .catch((e: unknown) => say('failed', e instanceof Error ? e.message : String(e)));
  };
  if (Notification.permission === 'granted') {
    run();
    return status;
  }
  if (Notification.permission === 'denied') return null;
  const button = h('button', { type: 'button', class: 'worker-link', 'data-testid': 'push-enable', onclick: () => {
    button.remove();
    run();
  } }, t('worker.push.enable'));
  return h('span', {}, button, status);
}
