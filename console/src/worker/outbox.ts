// What the worker app has to send, kept until the server has it (DESIGN §12, offline): each
// action is stored in IndexedDB with its time and SequenceNumber the moment it is taken,
// then sent in the order taken; what cannot be sent now waits for the network. A resend
// is safe: an MO message the server already holds (same SequenceNumber and
// SentFromDevice) is recognised and not processed again, and the one other action, an
// extension, sets an absolute duration.

/** A message as the app posts it to `…/devices/{id}/momessages?process=true`. */
export interface OutgoingMessage {
  MessageType: string;
  SequenceNumber: number;
  SentFromDevice: string;
  Message?: string;
  EmergencyState?: 'Active' | 'None';
  Position?: { Latitude: number; Longitude: number; Accuracy?: string; GpsTimestamp?: string; LocationSource?: string };
  Properties?: Record<string, string>;
}

/** What the page says is waiting. */
export type ActionKind = 'sos' | 'safe' | 'checkIn' | 'start' | 'end' | 'extend' | 'acknowledge';

export type Action =
  | { kind: Exclude<ActionKind, 'extend'>; tenant: string; deviceId: string; takenAt: string; message: OutgoingMessage }
  | { kind: 'extend'; tenant: string; deviceId: string; takenAt: string; durationMinutes: number };

export type Queued = Action & { id: number };

/** Where actions wait (IndexedDB in the browser; memory where it is refused, and in tests). */
export interface OutboxStore {
  add(action: Action): Promise<number>;
  /** Oldest first. */
  list(): Promise<Queued[]>;
  remove(id: number): Promise<void>;
}

export class MemoryOutbox implements OutboxStore {
  private next = 1;
  private readonly items: Queued[] = [];
  async add(action: Action): Promise<number> {
    const id = this.next++;
    this.items.push({ ...action, id });
    return id;
  }
  async list(): Promise<Queued[]> {
    return [...this.items].sort((a, b) => a.id - b.id);
  }
  async remove(id: number): Promise<void> {
    const at = this.items.findIndex((q) => q.id === id);
    if (at >= 0) this.items.splice(at, 1);
  }
}

const DB = 'safetrack-worker';
const STORE = 'outbox';

function request<T>(r: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error ?? new Error('IndexedDB request failed'));
  });
}

export class IdbOutbox implements OutboxStore {
  private readonly db: Promise<IDBDatabase>;
  constructor(factory: IDBFactory = indexedDB) {
    const open = factory.open(DB, 1);
    open.onupgradeneeded = () => {
      if (!open.result.objectStoreNames.contains(STORE)) open.result.createObjectStore(STORE, { keyPath: 'id', autoIncrement: true });
    };
    this.db = request(open);
  }
  private async store(mode: IDBTransactionMode): Promise<IDBObjectStore> {
    return (await this.db).transaction(STORE, mode).objectStore(STORE);
  }
  async add(action: Action): Promise<number> {
    return Number(await request((await this.store('readwrite')).add(action)));
  }
  async list(): Promise<Queued[]> {
    const all = (await request((await this.store('readonly')).getAll())) as Queued[];
    return all.sort((a, b) => a.id - b.id);
  }
  async remove(id: number): Promise<void> {
    await request((await this.store('readwrite')).delete(id));
  }
}

/** How one send ended: on the server, refused for good (a 4xx: dropped and said), or not now. */
export type Outcome = { sent: true } | { refused: string } | { later: true };

/**
 * Sends what waits, oldest first, one at a time; stops at the first that must wait (the
 * order is kept: an "I am safe" never overtakes its SOS). One flush at a time: a call
 * while one runs makes it go round once more.
 */
export class Outbox {
  private running: Promise<void> | null = null;
  private again = false;
  /** After every change of what waits, and each refusal. */
  onChange: (waiting: Queued[], refused: { action: Queued; why: string } | null) => void = () => undefined;

  constructor(
    private readonly store: OutboxStore,
    private readonly send: (action: Queued) => Promise<Outcome>,
  ) {}

  async take(action: Action): Promise<void> {
    await this.store.add(action);
    this.onChange(await this.store.list(), null);
    await this.flush();
  }

  waiting(): Promise<Queued[]> {
    return this.store.list();
  }

  flush(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.round();
      } while (this.again);
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async round(): Promise<void> {
    for (const action of await this.store.list()) {
      const outcome = await this.send(action);
      if ('later' in outcome) break;
      await this.store.remove(action.id);
      this.onChange(await this.store.list(), 'refused' in outcome ? { action, why: outcome.refused } : null);
    }
  }
}

/**
 * The next SequenceNumber for a device: never less than the last one given out here, nor
 * than the clock in milliseconds (so a reinstalled app does not reuse the old numbers).
 */
export function nextSequence(last: number | null, now: number): number {
  return Math.max((last ?? 0) + 1, Math.floor(now));
}
