// The one stream client: follows `/V2/{t}/stream?subtenants=true` with the session cookie.
// It reads Server-Sent Events over fetch (not EventSource) so that it can send
// `Last-Event-ID` itself when it reconnects, tell a 401 (session over) from a dropped
// connection, and back off. The server does not say whether it still held the last
// event seen, so every reconnection is treated as a possible gap: `onResync` asks the
// pages to re-read what they show (Last-Event-ID still spares them most duplicates).

export interface StreamEvent {
  id: string | null;
  event: string;
  data: string;
}

/** Incremental parser of the `text/event-stream` format. */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private id: string | null = null;
  /** The last `id:` seen (what Last-Event-ID resumes from). */
  lastId: string | null = null;

  constructor(private readonly emit: (e: StreamEvent) => void) {}

  push(chunk: string): void {
    this.buffer += chunk;
    let index: number;
    while ((index = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buffer.slice(0, index);
      const length = this.buffer.startsWith('\r\n', index) ? 2 : 1;
      this.buffer = this.buffer.slice(index + length);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      if (this.id !== null) this.lastId = this.id;
      if (this.data.length > 0) {
        this.emit({ id: this.id, event: this.event || 'message', data: this.data.join('\n') });
      }
      this.data = [];
      this.event = '';
      this.id = null;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.id = value;
  }
}

export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'closed';

export interface StreamHandlers {
  onEvent: (event: StreamEvent) => void;
  /** After a reconnection: what the page shows may have missed events; re-read it. */
  onResync: () => void;
  onState?: (state: StreamState) => void;
  /** The session is over (401): stop and go to login. */
  onUnauthorized?: () => void;
}

export interface StreamOptions {
  fetcher?: typeof fetch;
  /** Waits before reconnecting: attempt 1, 2, … (ms). */
  backoff?: (attempt: number) => number;
  sleep?: (ms: number) => Promise<void>;
}

export const defaultBackoff = (attempt: number): number =>
  Math.min(15000, 500 * 2 ** Math.max(0, attempt - 1));

export class StreamClient {
  private readonly controller = new AbortController();
  private lastId: string | null = null;
  private stopped = false;
  private readonly fetcher: typeof fetch;
  private readonly backoff: (attempt: number) => number;
  private readonly sleep: (ms: number) => Promise<void>;
  /** Finished when the loop ends (after `stop`, or a 401/403/404). */
  readonly done: Promise<void>;

  constructor(
    private readonly url: string,
    private readonly handlers: StreamHandlers,
    options: StreamOptions = {},
  ) {
    this.fetcher = options.fetcher ?? ((...a) => fetch(...a));
    this.backoff = options.backoff ?? defaultBackoff;
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.done = this.run();
  }

  stop(): void {
    this.stopped = true;
    this.controller.abort();
    this.handlers.onState?.('closed');
  }

  get lastEventId(): string | null {
    return this.lastId;
  }

  private async run(): Promise<void> {
    let attempt = 0;
    let connectedBefore = false;
    while (!this.stopped) {
      this.handlers.onState?.(connectedBefore ? 'reconnecting' : 'connecting');
      const headers: Record<string, string> = { Accept: 'text/event-stream' };
      if (this.lastId !== null) headers['Last-Event-ID'] = this.lastId;
      try {
        const response = await this.fetcher(this.url, {
          headers,
          credentials: 'same-origin',
          cache: 'no-store',
          signal: this.controller.signal,
        });
        if (response.status === 401) {
          this.handlers.onUnauthorized?.();
          break;
        }
        if (response.status === 403 || response.status === 404) break;
        if (!response.ok || !response.body) throw new Error(`stream answered ${response.status}`);
        attempt = 0;
        this.handlers.onState?.('live');
        if (connectedBefore) this.handlers.onResync();
        connectedBefore = true;
        await this.read(response.body);
      } catch (e) {
        if (this.stopped) break;
        void e;
      }
      if (this.stopped) break;
      attempt += 1;
      this.handlers.onState?.('reconnecting');
      await this.sleep(this.backoff(attempt));
    }
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const parser = new SseParser((event) => {
      if (event.id !== null) this.lastId = event.id;
      this.handlers.onEvent(event);
    });
    const reader = body.getReader();
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.push(decoder.decode(value, { stream: true }));
    }
    if (parser.lastId !== null) this.lastId = parser.lastId;
  }
}
