import { describe, expect, it } from 'vitest';
import { SseParser, StreamClient, type StreamEvent } from '../src/stream';

function body(chunks: string[], end = true): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(encoder.encode(c));
      if (end) controller.close();
    },
  });
}

describe('SSE parser', () => {
  it('reads events split anywhere, ignores comments, keeps the last id', () => {
    const got: StreamEvent[] = [];
    const p = new SseParser((e) => got.push(e));
    p.push(': keep-alive\n\nevent: alert\nid: 4');
    p.push('2\ndata: {"AlertId":"1"}\n\nevent: device\r\nid: 43\r\ndata: a\r\ndata: b\r\n\r\n');
    expect(got).toEqual([
      { id: '42', event: 'alert', data: '{"AlertId":"1"}' },
      { id: '43', event: 'device', data: 'a\nb' },
    ]);
    expect(p.lastId).toBe('43');
  });
});

describe('stream client', () => {
  it('reconnects with Last-Event-ID after a drop, and asks for a re-read (possible gap)', async () => {
    const requests: (string | null)[] = [];
    const answers = [
      () => new Response(body(['event: alert\nid: 10\ndata: {}\n\n', 'event: alert\nid: 11\ndata: {}\n\n'])),
      () => { throw new TypeError('network down'); },
      () => new Response(body(['event: alert\nid: 12\ndata: {}\n\n'], false)),
    ];
    let resyncs = 0;
    const events: string[] = [];
    const waits: number[] = [];
    let client: StreamClient | undefined;
    const reachedThird = new Promise<void>((resolve) => {
      client = new StreamClient(
        '/V2/acme/stream?subtenants=true',
        {
          onEvent: (e) => {
            events.push(e.id ?? '');
            if (e.id === '12') resolve();
          },
          onResync: () => (resyncs += 1),
        },
        {
          fetcher: async (_url, init) => {
            requests.push(new Headers(init?.headers).get('Last-Event-ID'));
            const next = answers.shift();
            if (!next) return new Promise<Response>(() => undefined);
            return next();
          },
          sleep: async (ms) => void waits.push(ms),
        },
      );
    });
    await reachedThird;
    client?.stop();
    expect(events).toEqual(['10', '11', '12']);
    expect(requests).toEqual([null, '11', '11']);
    expect(resyncs).toBe(1);
    expect(waits).toEqual([500, 1000]);
  });

  it('stops on 401 and tells the page the session is over', async () => {
    let unauthorized = 0;
    const client = new StreamClient(
      '/V2/acme/stream',
      { onEvent: () => undefined, onResync: () => undefined, onUnauthorized: () => (unauthorized += 1) },
      { fetcher: async () => new Response('', { status: 401 }), sleep: async () => undefined },
    );
    await client.done;
    expect(unauthorized).toBe(1);
  });

  it('backs off on server errors without re-reading until it is connected again', async () => {
    let calls = 0;
    let resyncs = 0;
    const waits: number[] = [];
    const client = new StreamClient(
      '/V2/acme/stream',
      { onEvent: () => undefined, onResync: () => (resyncs += 1) },
      {
        fetcher: async () => {
          calls += 1;
          if (calls >= 4) client.stop();
          return new Response('', { status: 503 });
        },
        sleep: async (ms) => void waits.push(ms),
      },
    );
    await client.done;
    expect(waits).toEqual([500, 1000, 2000]);
    expect(resyncs).toBe(0);
  });
});
