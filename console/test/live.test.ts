import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Device } from '../src/api';
import * as live from '../src/live';
import { loadSession } from '../src/session';

// What the live module keeps, through its public functions, against a fake server: the
// session, the queue, one listing of the devices in scope and the stream.
function fakeServer(listed: Device[]) {
  const encoder = new TextEncoder();
  let push: (chunk: string) => void = () => undefined;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      push = (chunk) => controller.enqueue(encoder.encode(chunk));
    },
  });
  const json = (body: unknown) => new Response(JSON.stringify(body), { headers: { 'Content-Type': 'application/json' } });
  const fetch = vi.fn(async (input: RequestInfo | URL): Promise<Response> => {
    const url = String(input);
    if (url === '/auth/session') return json({ Username: 'op@example.com', TenantCode: '1000', Permissions: ['Read'] });
    if (url.startsWith('/V2/1000/alerts?')) return json([]);
    if (url.startsWith('/V2/1000/devices?subtenants=true')) return json(listed);
    if (url === '/V2/1000/stream?subtenants=true') {
      return new Response(stream, { headers: { 'Content-Type': 'text/event-stream' } });
    }
    return new Response('{}', { status: 404 });
  });
  return { fetch, push: (event: string, data: unknown, id: number) => push(`event: ${event}\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`) };
}

const van = (tenant: string, extra: Partial<Device> = {}): Device => ({
  DeviceId: 'van-1',
  TenantCode: tenant,
  DeviceType: 'InReach',
  FriendlyName: `Van of ${tenant}`,
  ...extra,
});

afterEach(() => {
  live.stopLive();
  vi.unstubAllGlobals();
});

describe('devices in scope', () => {
  it('keeps two subtenants’ devices of the same id apart, and a device event updates only its own tenant’s', async () => {
    const server = fakeServer([van('1001'), van('1002')]);
    vi.stubGlobal('fetch', server.fetch);
    await loadSession();
    const isLive = new Promise<void>((resolve) => live.streamState.on((s) => s === 'live' && resolve()));
    await live.startLive(() => undefined);
    await isLive;
    await live.loadDevices();
    expect(live.devices.get(live.deviceKey('1001', 'van-1'))?.FriendlyName).toBe('Van of 1001');
    expect(live.devices.get(live.deviceKey('1002', 'van-1'))?.FriendlyName).toBe('Van of 1002');

    const changed: Device[] = [];
    const seen = new Promise<void>((resolve) =>
      live.deviceChanged.on((d) => {
        changed.push(d);
        if (changed.length === 2) resolve();
      }),
    );
    const moved = { Lat: 48.85, Lon: 2.35 };
    // 1002's van moves, then a device of the same id appears in a third subtenant.
    server.push('device', van('1002', { LastPosition: moved, EmergencyState: 'Active' }), 1);
    server.push('device', van('1003'), 2);
    await seen;

    expect(changed.map((d) => d.TenantCode)).toEqual(['1002', '1003']);
    const of1001 = await live.device('1001', 'van-1');
    const of1002 = await live.device('1002', 'van-1');
    const of1003 = await live.device('1003', 'van-1');
    expect(of1001?.LastPosition ?? null).toBeNull();
    expect(of1001?.EmergencyState ?? null).toBeNull();
    expect(of1002?.LastPosition).toEqual(moved);
    expect(of1002?.EmergencyState).toBe('Active');
    expect(of1003?.FriendlyName).toBe('Van of 1003');
    expect(live.devices.size).toBe(3);
    // Read from the held records: nothing was asked of the server one device at a time.
    expect(server.fetch.mock.calls.map(([url]) => String(url)).filter((u) => u.includes('/devices/'))).toEqual([]);
  });
});

describe('events of other kinds', () => {
  it('dispatches monitoring events as their own kind (a malformed one dropped), passes a kind it does not know on, never parses momessage', async () => {
    const server = fakeServer([]);
    vi.stubGlobal('fetch', server.fetch);
    await loadSession();
    const isLive = new Promise<void>((resolve) => live.streamState.on((s) => s === 'live' && resolve()));
    await live.startLive(() => undefined);
    await isLive;
    const lines: live.MonitoringStreamEvent[] = [];
    const others: { kind: string; record: unknown }[] = [];
    live.monitoringEvent.on((e) => lines.push(e));
    const got = new Promise<void>((resolve) =>
      live.otherEvent.on((e) => {
        others.push(e);
        resolve();
      }),
    );
    const parse = vi.spyOn(JSON, 'parse');
    const session = { MonitoringSessionId: '12', TenantCode: '1000', DeviceId: 'van-1', State: 'Ok' };
    const line = { EventId: '41', MonitoringSessionId: '12', At: '2026-12-02T10:00:00Z', Kind: 'CheckIn', DeviceId: 'van-1', Session: session };
    server.push('momessage', { DeviceId: 'van-1' }, 1);
    server.push('monitoring', { DeviceId: 'van-1', TenantCode: '1000', State: 'Ok' }, 2);
    server.push('monitoring', line, 3);
    server.push('tenant', { TenantCode: '1001' }, 4);
    await got;
    expect(lines).toEqual([line]);
    expect(others).toEqual([{ kind: 'tenant', record: { TenantCode: '1001' } }]);
    expect(parse.mock.calls.some(([text]) => String(text).includes('"DeviceId":"van-1"}'))).toBe(false);
    parse.mockRestore();
  });
});
