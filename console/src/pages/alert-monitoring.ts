// The alert page's "Working alone" panel (DESIGN §11): when the alert's device has a
// current monitoring session (`GET …/devices/{id}/monitoring`; a 404 is none), what the
// person said they were doing and where, when it started, the last check-in, the planned
// end and the state (shape and word) with the countdown. Hidden otherwise. Kept from the
// stream's `monitoring` events of the device (`event`: a check-in, a change, the end, a
// new session) as the board is (`SessionBoard`); `read` after a gap and as a safety net.
import { api, NotFoundError, v2, type MonitoringSession } from '../api';
import { h } from '../dom';
import { t, type Key } from '../i18n';
import { formatDateTime } from '../format';
import { SessionBoard, agoWords, countdown, sessionKey, stateAt, type MonitoringStreamEvent } from '../monitoring';
import { monitoringBadge } from './monitoring';

export interface MonitoringBox {
  element: HTMLElement;
  /** Reads the device's current session and shows it (or hides the panel). */
  read(tenantCode: string, deviceId: string): Promise<void>;
  /** A `monitoring` stream event: shown when it is of the device (tenant, device) watched. */
  event(e: MonitoringStreamEvent, tenantCode: string, deviceId: string): void;
  /** The countdown and the ages again (every second). */
  tick(): void;
}

export function monitoringBox(): MonitoringBox {
  const list = h('dl', { class: 'monitoring-panel', 'data-testid': 'monitoring-panel-fields' });
  const element = h(
    'section',
    { class: 'monitoring-box', 'aria-labelledby': 'monitoring-h', 'data-testid': 'monitoring-panel', hidden: true },
    h('h2', { id: 'monitoring-h' }, t('monitoring.panel')),
    list,
  );
  let held: MonitoringSession | null = null;
  // The device's session as the stream and the reads leave it (one key at most).
  const board = new SessionBoard();
  const state = h('dd', { 'data-field': 'state' });
  const due = h('span', { class: 'countdown', 'data-testid': 'countdown' });
  const last = h('span', { 'data-testid': 'last-check-in' });

  const tick = (): void => {
    if (!held) return;
    const now = Date.now();
    const s = stateAt(held, now);
    if (state.dataset.state !== s) {
      state.dataset.state = s;
      state.replaceChildren(monitoringBadge(s), ' ', due);
    }
    const c = countdown(held, now);
    due.textContent = `(${c.text})`;
    due.dataset.phase = c.phase;
    last.textContent = held.LastCheckInAt ? `${formatDateTime(held.LastCheckInAt)} (${agoWords(held.LastCheckInAt, now)})` : agoWords(null, now);
  };

  const show = (s: MonitoringSession | null): void => {
    // The same version again: only the state may have turned (the clock shows it).
    if (s && held && s.ETag === held.ETag && s.MonitoringSessionId === held.MonitoringSessionId) {
      held = s;
      tick();
      return;
    }
    held = s;
    element.hidden = !s;
    if (!s) return;
    delete state.dataset.state;
    const rows: [Key, string | Node][] = [
      ['monitoring.col.note', s.Note?.trim() ? s.Note : t('monitoring.noNote')],
      ['monitoring.started', t('monitoring.startedBy', { at: formatDateTime(s.StartedAt), who: s.StartedBy })],
      ['monitoring.col.lastCheckIn', last],
      ['monitoring.col.plannedEnd', formatDateTime(s.PlannedEndAt)],
    ];
    list.replaceChildren(
      ...rows.flatMap(([k, v]) => [h('dt', {}, t(k)), h('dd', { 'data-field': k }, v)]),
      h('dt', {}, t('monitoring.col.state')),
      state,
    );
    tick();
  };

  const key = (tenantCode: string, deviceId: string): string => sessionKey({ TenantCode: tenantCode, DeviceId: deviceId });
  const showHeld = (tenantCode: string, deviceId: string): void => show(board.get(key(tenantCode, deviceId)) ?? null);

  const read = async (tenantCode: string, deviceId: string): Promise<void> => {
    const since = board.mark();
    let list: MonitoringSession[];
    try {
      list = [await api.get<MonitoringSession>(v2(tenantCode, 'devices', deviceId, 'monitoring'))];
    } catch (e) {
      // 404: no current session. Anything else: the panel stays as it was.
      if (!(e instanceof NotFoundError)) return;
      list = [];
    }
    board.read(list, since);
    showHeld(tenantCode, deviceId);
  };

  const event = (e: MonitoringStreamEvent, tenantCode: string, deviceId: string): void => {
    if (sessionKey(e.Session) !== key(tenantCode, deviceId)) return;
    if (board.event(e)) showHeld(tenantCode, deviceId);
  };
  return { element, read, event, tick };
}
