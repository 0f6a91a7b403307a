// What every page shares while logged in: the one stream, the alerts known so far, the
// devices and users read so far, and the announcement of new alerts. The stream and the
// queue cover the caller's own tenant with subtenants, whatever the working tenant.
import { api, v2, type Device, type User } from './api';
import { AlertStore, alertKey, isAnnounced, type Alert } from './alerts';
import { StreamClient, type StreamEvent, type StreamState } from './stream';
import { asMonitoringEvent, type MonitoringStreamEvent } from './monitoring';
import { ownTenant as tenant } from './session';

// The records are the API document's (api.ts); re-exported for the pages that read them here.
export type { Device, User } from './api';
export type { MonitoringStreamEvent } from './monitoring';

type Listener<T> = (value: T) => void;

class Topic<T> {
  private readonly listeners = new Set<Listener<T>>();
  on(l: Listener<T>): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  emit(v: T): void {
    for (const l of this.listeners) l(v);
  }
}

export const alerts = new AlertStore();
export const alertChanged = new Topic<Alert>();
export const queueReloaded = new Topic<void>();
export const deviceChanged = new Topic<Device>();
export const streamState = new Topic<StreamState>();
export const announced = new Topic<Alert>();
/** Re-read what pages show: after a gap in the stream. */
export const resync = new Topic<void>();

let stream: StreamClient | null = null;
let state: StreamState = 'connecting';

export function currentStreamState(): StreamState {
  return state;
}

/** Reads the queue (Open and Acknowledged, with subtenants). */
export async function readQueue(): Promise<void> {
  const t = tenant();
  const [open, acknowledged] = await Promise.all([
    api.all<Alert>(`${v2(t, 'alerts')}?status=Open&subtenants=true`),
    api.all<Alert>(`${v2(t, 'alerts')}?status=Acknowledged&subtenants=true`),
  ]);
  alerts.replaceQueue([...open, ...acknowledged]);
  queueReloaded.emit();
}

/**
 * A `monitoring` event (a line of a session's history with the session as it then was,
 * docs/monitoring.md "Events"), of the shape `MonitoringStreamEvent` (else dropped): the
 * Working alone board and the alert page's panel keep their sessions from these.
 */
export const monitoringEvent = new Topic<MonitoringStreamEvent>();

/**
 * An event of a kind this module does not know (any kind the server adds later), parsed:
 * a page that cares reads its record.
 */
export const otherEvent = new Topic<{ kind: string; record: unknown }>();

function onEvent(event: StreamEvent): void {
  // `momessage` events (as many as the devices' positions) are not even parsed.
  if (event.event === 'momessage') return;
  let record: unknown;
  try {
    record = JSON.parse(event.data);
  } catch {
    return;
  }
  if (event.event === 'monitoring') {
    const line = asMonitoringEvent(record);
    if (line) monitoringEvent.emit(line);
    return;
  }
  if (event.event !== 'alert' && event.event !== 'device') {
    otherEvent.emit({ kind: event.event, record });
    return;
  }
  if (event.event === 'alert') {
    const alert = record as Alert;
    const { added, changed } = alerts.upsert(alert);
    if (changed) alertChanged.emit(alerts.get(alertKey(alert)) ?? alert);
    if (added && isAnnounced(alert)) announced.emit(alert);
  } else {
    // A device id is unique only within its tenant: the record names its tenant.
    const device = record as Device;
    devices.set(deviceKey(device.TenantCode ?? tenant(), device.DeviceId), device);
    deviceChanged.emit(device);
  }
}

function reread(): void {
  void readQueue().catch(() => undefined);
  // Devices are re-read only if a page asked for them before.
  if (devicesRead) void loadDevices(true).catch(() => undefined);
  resync.emit();
}

/** Opens the stream (first) and reads the queue, so nothing falls between the two. */
export async function startLive(onUnauthorized: () => void): Promise<void> {
  stopLive();
  let wasLive = false;
  stream = new StreamClient(`${v2(tenant(), 'stream')}?subtenants=true`, {
    onEvent,
    onResync: reread,
    onState: (s) => {
      // What was read before the first connection was up (the queue, an alert page) may
      // have changed before the server had us subscribed: read it again once, then.
      if (s === 'live' && !wasLive) {
        wasLive = true;
        reread();
      }
      state = s;
      streamState.emit(s);
    },
    onUnauthorized,
  });
  await readQueue();
  // Read ahead for the map and the queue's device names, once the queue is shown.
  void loadDevices().catch(() => undefined);
}

export function stopLive(): void {
  stream?.stop();
  stream = null;
  devicesRead = null;
  scopeRead = null;
  devices.clear();
}

export const devices = new Map<string, Device>();
/** Every device in scope has been read (devices read one by one do not count). */
export const devicesReloaded = new Topic<void>();
let devicesRead: Promise<void> | null = null;

let scopeRead: Promise<string[]> | null = null;

/** The caller's tenant and its subtenants, breadth first (read once per session). */
export function tenantsInScope(): Promise<string[]> {
  scopeRead ??= readTenantsInScope(tenant());
  return scopeRead;
}

async function readTenantsInScope(root: string): Promise<string[]> {
  const below = await api
    .all<{ TenantCode?: string }>(`${v2(root, 'tenants')}?subtenants=true`)
    .catch(() => [] as { TenantCode?: string }[]);
  return [root, ...below.flatMap((c) => (c.TenantCode ? [c.TenantCode] : []))];
}

/** Every device in scope, each with its `TenantCode`: one paged listing of the subtree. */
async function readDevicesInScope(): Promise<Device[]> {
  return api.all<Device>(`${v2(tenant(), 'devices')}?subtenants=true&pageSize=10000`);
}

/**
 * Reads every device in scope into `devices` once per session (`again`: read anew, after
 * a gap in the stream), then tells `devicesReloaded`.
 */
export function loadDevices(again = false): Promise<void> {
  if (devicesRead && !again) return devicesRead;
  devicesRead = readDevicesInScope().then((list) => {
    devices.clear();
    for (const d of list) devices.set(deviceKey(d.TenantCode ?? tenant(), d.DeviceId), d);
    devicesReloaded.emit();
  });
  devicesRead.catch(() => (devicesRead = null));
  return devicesRead;
}
const users = new Map<string, User | null>();
const pending = new Map<string, Promise<unknown>>();

export function deviceKey(tenantCode: string, deviceId: string): string {
  return `${tenantCode}/${deviceId}`;
}

/** A device, read once (null when it cannot be read). */
export async function device(tenantCode: string, deviceId: string): Promise<Device | null> {
  const key = deviceKey(tenantCode, deviceId);
  const held = devices.get(key);
  if (held) return held;
  if (!pending.has(key)) {
    pending.set(
      key,
      api
        .get<Device>(v2(tenantCode, 'devices', deviceId))
        .then((d) => {
          devices.set(key, { ...d, TenantCode: d.TenantCode ?? tenantCode });
          return d;
        })
        .catch(() => null)
        .finally(() => pending.delete(key)),
    );
  }
  await pending.get(key);
  return devices.get(key) ?? null;
}

export async function user(tenantCode: string, userId: string): Promise<User | null> {
  const key = `${tenantCode}/${userId}`;
  if (users.has(key)) return users.get(key) ?? null;
  const u = await api.get<User>(v2(tenantCode, 'users', userId)).catch(() => null);
  users.set(key, u);
  return u;
}

export function userName(u: User | null | undefined): string {
  if (!u) return '';
  const full = [u.FirstName, u.LastName].filter(Boolean).join(' ');
  return full || u.Username || u.UserId || '';
}
