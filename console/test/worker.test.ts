// The worker app's logic without a browser: the SOS hold (a short press sends nothing),
// the outbox (in order, stops at the first that must wait, a refusal dropped and said),
// sequence numbers, and which devices are the caller's.
import { describe, expect, it } from 'vitest';
import { Hold } from '../src/worker/hold';
import { MemoryOutbox, nextSequence, Outbox, type Action, type Outcome, type Queued } from '../src/worker/outbox';
import { assignedTo } from '../src/worker/choose';
import type { Device } from '../src/api';

/** A clock and timers moved by hand. */
function fakeTime() {
  let now = 0;
  let next = 1;
  const timers = new Map<number, { at: number; fn: () => void }>();
  return {
    now: () => now,
    schedule: (fn: () => void, ms: number) => {
      timers.set(next, { at: now + ms, fn });
      return next++;
    },
    unschedule: (h: number) => void timers.delete(h),
    advance(ms: number) {
      const end = now + ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        now = due[1].at;
        due[1].fn();
      }
      now = end;
    },
  };
}

describe('the SOS hold', () => {
  const setUp = () => {
    const time = fakeTime();
    const counts: (number | null)[] = [];
    const vibrations: (number | number[])[] = [];
    let done = 0;
    const hold = new Hold({ holdMs: 2000, onCount: (n) => counts.push(n), onDone: () => done++, vibrate: (p) => vibrations.push(p), ...time });
    return { time, hold, counts, vibrations, done: () => done };
  };

  it('fires once the whole hold has passed, counting 2, 1', () => {
    const { time, hold, counts, vibrations, done } = setUp();
    hold.press();
    time.advance(1999);
    expect(done()).toBe(0);
    time.advance(10);
    expect(done()).toBe(1);
    expect(counts.filter((c) => c !== null)).toEqual([2, 1]);
    expect(counts.at(-1)).toBeNull();
    expect(vibrations.length).toBeGreaterThanOrEqual(2);
    time.advance(5000);
    expect(done()).toBe(1);
  });

  it('sends nothing when let go early, and starts over on the next press', () => {
    const { time, hold, done } = setUp();
    hold.press();
    time.advance(1500);
    hold.release();
    time.advance(5000);
    expect(done()).toBe(0);
    hold.press();
    time.advance(1000);
    expect(done()).toBe(0);
    time.advance(1000);
    expect(done()).toBe(1);
  });
});

const action = (kind: Action['kind'], n: number): Action =>
  kind === 'extend'
    ? { kind, tenant: '1000', deviceId: 'd', takenAt: `t${n}`, durationMinutes: n }
    : { kind, tenant: '1000', deviceId: 'd', takenAt: `t${n}`, message: { MessageType: 'CheckIn', SequenceNumber: n, SentFromDevice: `t${n}` } };

describe('the outbox', () => {
  it('keeps what cannot go, then sends it in the order taken, once each', async () => {
    const sent: string[] = [];
    let online = false;
    const outbox = new Outbox(new MemoryOutbox(), async (q: Queued): Promise<Outcome> => {
      if (!online) return { later: true };
      sent.push(q.takenAt);
      return { sent: true };
    });
    await outbox.take(action('sos', 1));
    await outbox.take(action('checkIn', 2));
    expect((await outbox.waiting()).map((q) => q.kind)).toEqual(['sos', 'checkIn']);
    online = true;
    await Promise.all([outbox.flush(), outbox.flush()]);
    expect(sent).toEqual(['t1', 't2']);
    expect(await outbox.waiting()).toEqual([]);
  });

  it('drops a refused action and says so, then goes on', async () => {
    const refusals: string[] = [];
    const outbox = new Outbox(new MemoryOutbox(), async (q) => (q.kind === 'end' ? { refused: 'no session' } : { sent: true }));
    outbox.onChange = (_, refused) => {
      if (refused) refusals.push(`${refused.action.kind}: ${refused.why}`);
    };
    await outbox.take(action('end', 1));
    await outbox.take(action('checkIn', 2));
    expect(refusals).toEqual(['end: no session']);
    expect(await outbox.waiting()).toEqual([]);
  });

  it('numbers a device’s messages upwards, never below the clock', () => {
    expect(nextSequence(null, 1_700_000_000_000)).toBe(1_700_000_000_000);
    expect(nextSequence(1_700_000_000_005, 1_700_000_000_000)).toBe(1_700_000_000_006);
  });
});

describe('which device', () => {
  it('is the devices whose UserId is the caller, by name', () => {
    const d = (id: string, user: string | null, name?: string) => ({ DeviceId: id, UserId: user, FriendlyName: name, DeviceType: 'Phone' }) as Device;
    const mine = assignedTo([d('a', '7', 'Zed'), d('b', '8'), d('c', '7', 'Alpha'), d('e', null)], '7');
    expect(mine.map((x) => x.DeviceId)).toEqual(['c', 'a']);
    expect(assignedTo([d('a', '7')], null)).toEqual([]);
  });
});

describe('push subscriptions', () => {
  it('reads the VAPID key as bytes and gives the API the subscription in its shape', async () => {
    const { fromBase64Url, subscriptionBody } = await import('../src/worker/push');
    expect([...fromBase64Url('AQID_-8')]).toEqual([1, 2, 3, 255, 239]);
    expect([...fromBase64Url('AQID_-8=')]).toEqual([1, 2, 3, 255, 239]);
    const body = subscriptionBody(
      { endpoint: 'https://push.example.net/x', expirationTime: null, keys: { p256dh: 'BAA', auth: 'AAA' } },
      'phone-1',
    );
    expect(body).toEqual({ Endpoint: 'https://push.example.net/x', Keys: { P256dh: 'BAA', Auth: 'AAA' }, DeviceId: 'phone-1' });
  });
});
