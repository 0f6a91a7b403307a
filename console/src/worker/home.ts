// The worker app's one screen, for one device: where the position stands, the SOS (held
// for 2 s) and the emergency it opened ("acknowledged by …", "I am safe"), the session
// (shift.ts), the operators' texts (texts.ts) and what waits to be sent. Kept live from
// the stream of the device's tenant: its `alert`, `device` and `monitoring` events.
import { api, v2, type Alert, type Device } from '../api';
import { clear, h } from '../dom';
import { formatDateTime } from '../format';
import { t, type Key } from '../i18n';
import { asMonitoringEvent } from '../monitoring';
import { StreamClient } from '../stream';
import { deviceName } from './choose';
import * as send from './client';
import { Hold, holdButton } from './hold';
import { Outbox, type Queued } from './outbox';
import { Location } from './position';
import { Shift } from './shift';
import { Texts } from './texts';

export interface Home {
  stop(): void;
}

const EMERGENCY_KEY = 'safetrack.worker.emergency';

function heldEmergency(key: string): boolean {
  try {
    return localStorage.getItem(`${EMERGENCY_KEY}.${key}`) === '1';
  } catch {
    return false;
  }
}

function holdEmergency(key: string, on: boolean): void {
  try {
    if (on) localStorage.setItem(`${EMERGENCY_KEY}.${key}`, '1');
    else localStorage.removeItem(`${EMERGENCY_KEY}.${key}`);
  } catch {
    // Storage refused: the device's state read from the server still says it.
  }
}

/** The screen for `device`; `outbox` sends what it is given (and what waited). */
export function homePage(outlet: HTMLElement, device: Device, outbox: Outbox, onChange: () => void, onUnauthorized: () => void): Home {
  const target = { tenant: device.TenantCode ?? '', deviceId: device.DeviceId };
  const key = `${target.tenant}/${target.deviceId}`;
  const location = new Location();
  const locationLine = h('p', { class: 'worker-location', 'data-testid': 'location', role: 'status' });
  const showLocation = (): void => {
    locationLine.dataset.state = location.state;
    locationLine.textContent = t(`worker.location.${location.state}` as Key);
  };
  location.onState = showLocation;
  showLocation();
  location.start();

  // The SOS and the emergency it opens; `keptSos`: the time of the last SOS until it is sent.
  let keptSos: string | null = null;
  let sentSos = false;
  let emergency = heldEmergency(key) || device.EmergencyState === 'Active' || device.EmergencyState === 'Fall';
  const sosCount = h('span', { class: 'worker-sos-count', 'aria-hidden': 'true' }, t('worker.sosHint'));
  const sosButton = h('button', { type: 'button', class: 'worker-sos', 'aria-label': t('worker.sosLabel'), 'data-testid': 'sos' },
    h('span', { class: 'worker-sos-word' }, t('worker.sos')), sosCount);
  const sosLive = h('p', { class: 'worker-live', role: 'status', 'aria-live': 'assertive', 'data-testid': 'sos-status' });
  const acknowledged = h('p', { class: 'worker-acknowledged', role: 'status', 'data-testid': 'acknowledged', hidden: true });
  const safeButton = h('button', { type: 'button', class: 'worker-wide worker-safe', 'data-testid': 'safe', hidden: true }, t('worker.safe'));
  const showEmergency = (): void => {
    safeButton.hidden = !emergency;
    sosButton.dataset.emergency = emergency ? 'on' : 'off';
    if (!emergency) acknowledged.hidden = true;
  };
  const hold = new Hold({
    holdMs: 2000,
    vibrate: (p) => navigator.vibrate?.(p),
    onCount: (n) => {
      sosButton.dataset.holding = n === null ? 'false' : 'true';
      sosCount.textContent = n === null ? t('worker.sosHint') : t('worker.sosCount', { n });
      if (n !== null) sosLive.textContent = t('worker.sosCount', { n });
      else if (keptSos === null && !sentSos) sosLive.textContent = '';
    },
    onDone: () => {
      emergency = true;
      holdEmergency(key, true);
      showEmergency();
      void (async () => {
        const action = send.sos(target, await location.current());
        keptSos = action.takenAt;
        sentSos = false;
        sosLive.textContent = t('worker.sosWaiting', { at: formatDateTime(action.takenAt) });
        await outbox.take(action);
      })();
    },
  });
  holdButton(sosButton, hold);
  safeButton.addEventListener('click', () => {
    emergency = false;
    holdEmergency(key, false);
    showEmergency();
    void (async () => {
      const action = send.safe(target, await location.current());
      sosLive.textContent = t('worker.safeSent', { at: formatDateTime(action.takenAt) });
      await outbox.take(action);
    })();
  });
  showEmergency();

  const showAlert = (a: Alert): void => {
    if (a.DeviceId !== target.deviceId || (a.TenantCode && a.TenantCode !== target.tenant)) return;
    if (a.Status === 'Acknowledged' && a.AcknowledgedBy && emergency) {
      acknowledged.hidden = false;
      acknowledged.textContent = t('worker.acknowledgedBy', { who: a.AcknowledgedBy, at: formatDateTime(a.AcknowledgedAt) });
    }
  };
  const readAlerts = async (): Promise<void> => {
    const list = await api.get<Alert[]>(`${v2(target.tenant, 'alerts')}?status=Acknowledged`);
    for (const a of list) showAlert(a);
  };

  const shift = new Shift(target, outbox, location);
  const texts = new Texts(target, outbox);

  // What waits.
  const waitingList = h('ul', { class: 'worker-waiting', 'data-testid': 'waiting' });
  const refusedLine = h('p', { class: 'message', role: 'alert', 'data-testid': 'refused' });
  const showWaiting = (waiting: Queued[]): void => {
    clear(waitingList);
    if (waiting.length === 0) waitingList.append(h('li', { class: 'worker-muted' }, t('worker.waiting.none')));
    for (const q of waiting) {
      waitingList.append(h('li', { 'data-kind': q.kind }, t('worker.waiting.item', { what: t(`worker.kind.${q.kind}` as Key), at: formatDateTime(q.takenAt) })));
    }
    waitingList.dataset.count = String(waiting.length);
  };
  outbox.onChange = (waiting, refused) => {
    showWaiting(waiting);
    if (refused) refusedLine.textContent = t('worker.waiting.refused', { what: t(`worker.kind.${refused.action.kind}` as Key), why: refused.why });
    if (refused?.action.kind === 'sos') keptSos = null;
    if (keptSos !== null && !waiting.some((q) => q.kind === 'sos' && q.takenAt === keptSos)) {
      sosLive.textContent = t('worker.sosSent', { at: formatDateTime(keptSos) });
      keptSos = null;
      sentSos = true;
    }
    if (refused === null) texts.sent();
  };
  void outbox.waiting().then(showWaiting);

  const offline = h('p', { class: 'worker-offline', role: 'status', 'data-testid': 'offline', hidden: navigator.onLine });
  offline.textContent = t('worker.offline');
  const online = (): void => {
    offline.hidden = true;
    void outbox.flush();
  };
  const gone = (): void => {
    offline.hidden = false;
  };
  window.addEventListener('online', online);
  window.addEventListener('offline', gone);
  const retry = window.setInterval(() => void outbox.flush(), 15_000);

  outlet.append(
    h(
      'main',
      { class: 'worker-main' },
      h('p', { class: 'worker-device', 'data-testid': 'device' }, t('worker.device', { name: deviceName(device) }),
        ' ', h('button', { type: 'button', class: 'worker-link', onclick: onChange }, t('worker.change'))),
      offline,
      locationLine,
      h('section', { class: 'worker-sos-section', 'aria-label': t('worker.sos') }, sosButton, sosLive, acknowledged, safeButton),
      shift.element,
      texts.element,
      h('section', { 'aria-labelledby': 'worker-waiting-heading' },
        h('h2', { id: 'worker-waiting-heading' }, t('worker.waiting.heading')), waitingList, refusedLine),
    ),
  );

  const reread = (): void => {
    void readAlerts().catch(() => undefined);
    void shift.read();
    void texts.read();
  };
  const stream = new StreamClient(v2(target.tenant, 'stream'), {
    onEvent: (event) => {
      if (event.event === 'momessage') return;
      let record: unknown;
      try {
        record = JSON.parse(event.data);
      } catch {
        return;
      }
      if (event.event === 'alert') showAlert(record as Alert);
      else if (event.event === 'monitoring') {
        const line = asMonitoringEvent(record);
        if (line && line.Session.DeviceId === target.deviceId && line.Session.TenantCode === target.tenant) shift.event(line);
      } else if (event.event === 'device') {
        const d = record as Device;
        if (d.DeviceId === target.deviceId && (d.TenantCode ?? target.tenant) === target.tenant && d.EmergencyState) {
          const on = d.EmergencyState === 'Active' || d.EmergencyState === 'Fall';
          // The server's word ends an emergency only once nothing of ours waits.
          void outbox.waiting().then((w) => {
            if (w.length > 0 || on === emergency) return;
            emergency = on;
            holdEmergency(key, on);
            showEmergency();
          });
        }
      }
    },
    onResync: reread,
    onUnauthorized,
  });
  reread();
  void outbox.flush();
  return {
    stop: () => {
      stream.stop();
      shift.stop();
      texts.stop();
      window.clearInterval(retry);
      window.removeEventListener('online', online);
      window.removeEventListener('offline', gone);
    },
  };
}
