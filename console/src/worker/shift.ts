// The worker's monitoring session (DESIGN §11): none — the start form (duration and
// interval presets, "where / what"); one — the countdown to the next check-in, "I'm OK",
// extend, end. When a check-in comes due: sound, vibration and a notification where
// permitted; past it the page says so plainly, and once the grace is over that the
// operators have been alerted. Kept from the stream's `monitoring` events, read at the
// start and after a gap.
import { api, NotFoundError, v2, type MonitoringSession } from '../api';
import { append, clear, h } from '../dom';
import { formatDateTime } from '../format';
import { t } from '../i18n';
import { countdown, extendedDuration, hasEnded, stateAt, type MonitoringStreamEvent } from '../monitoring';
import * as send from './client';
import type { Target } from './client';
import type { Outbox } from './outbox';
import type { Location } from './position';

const DURATIONS = [30, 60, 120, 240, 480];
const INTERVALS = [15, 30, 60];

function minutesWords(n: number): string {
  return n % 60 === 0 ? t('worker.session.hours', { n: n / 60 }) : t('worker.session.minutes', { n });
}

function select(id: string, values: number[], chosen: number): HTMLSelectElement {
  return h('select', { id, name: id }, ...values.map((v) => h('option', { value: String(v), selected: v === chosen }, minutesWords(v))));
}

export class Shift {
  readonly element: HTMLElement;
  private readonly body = h('div', {});
  private readonly live = h('p', { class: 'worker-live', role: 'status', 'data-testid': 'session-status' });
  private session: MonitoringSession | null = null;
  private lastEventId: string | null = null;
  private timer: number;
  private countdownLine: HTMLElement | null = null;
  private dueLine: HTMLElement | null = null;
  private alarmedFor: string | null = null;

  constructor(
    private readonly target: Target,
    private readonly outbox: Outbox,
    private readonly location: Location,
  ) {
    this.element = h('section', { class: 'worker-session', 'aria-labelledby': 'worker-session-heading', 'data-testid': 'session' },
      h('h2', { id: 'worker-session-heading' }, t('worker.session.heading')), this.body, this.live);
    this.timer = window.setInterval(() => this.tick(), 1000);
    this.draw();
  }

  stop(): void {
    window.clearInterval(this.timer);
  }

  async read(): Promise<void> {
    try {
      this.put(await api.get<MonitoringSession>(v2(this.target.tenant, 'devices', this.target.deviceId, 'monitoring')));
    } catch (e) {
      if (e instanceof NotFoundError) this.put(null);
    }
  }

  event(line: MonitoringStreamEvent): void {
    if (this.lastEventId !== null && line.EventId.localeCompare(this.lastEventId, 'en', { numeric: true }) <= 0) return;
    this.lastEventId = line.EventId;
    this.put(hasEnded(line.Session) ? null : line.Session);
  }

  private put(session: MonitoringSession | null): void {
    const shown = (x: MonitoringSession | null): string => (x ? `${x.MonitoringSessionId} ${x.PlannedEndAt} ${x.Note ?? ''}` : '');
    const same = shown(this.session) === shown(session);
    this.session = session;
    // The start form is drawn once: a read must not take away what is being typed or chosen.
    if (!same || (session && !this.countdownLine)) this.draw();
    this.tick();
  }

  private draw(): void {
    clear(this.body);
    this.countdownLine = null;
    this.dueLine = null;
    const s = this.session;
    this.element.dataset.state = s ? 'on' : 'none';
    if (!s) {
      this.body.append(this.startForm());
      return;
    }
    this.countdownLine = h('p', { class: 'worker-countdown', 'data-testid': 'countdown' });
    this.dueLine = h('p', { class: 'worker-due', role: 'alert', 'data-testid': 'due' });
    const checkIn = h('button', { type: 'button', class: 'worker-big worker-ok', 'data-testid': 'check-in' }, t('worker.session.checkIn'));
    checkIn.addEventListener('click', () => void this.act(async () => send.checkIn(this.target, await this.location.current()), 'worker.session.checkedIn'));
    const extend = h('button', { type: 'button', class: 'worker-wide' }, t('worker.session.extend'));
    extend.addEventListener('click', () => {
      const current = this.session;
      if (current) void this.act(async () => send.extend(this.target, extendedDuration(current, 30, Date.now())), null);
    });
    const end = h('button', { type: 'button', class: 'worker-wide' }, t('worker.session.end'));
    end.addEventListener('click', () => void this.act(async () => send.end(this.target, await this.location.current()), 'worker.session.ended'));
    append(
      this.body,
      this.countdownLine,
      this.dueLine,
      checkIn,
      s.Note ? h('p', {}, t('worker.session.noteShown', { note: s.Note })) : null,
      h('p', { 'data-testid': 'planned-end' }, t('worker.session.plannedEnd', { at: formatDateTime(s.PlannedEndAt) })),
      h('div', { class: 'worker-row' }, extend, end),
    );
  }

  private startForm(): HTMLElement {
    const duration = select('worker-duration', DURATIONS, 120);
    const interval = select('worker-interval', INTERVALS, 30);
    const note = h('input', { id: 'worker-note', name: 'note', maxlength: 500, placeholder: t('worker.session.noteHint'), autocomplete: 'off' });
    const form = h('form', { class: 'worker-form' },
      h('p', {}, t('worker.session.none')),
      h('label', { for: 'worker-duration' }, t('worker.session.duration')), duration,
      h('label', { for: 'worker-interval' }, t('worker.session.interval')), interval,
      h('label', { for: 'worker-note' }, t('worker.session.note')), note,
      h('button', { type: 'submit', class: 'worker-big' }, t('worker.session.start')));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      askToNotify();
      const plan = { durationMinutes: Number(duration.value), intervalMinutes: Number(interval.value), note: note.value };
      void this.act(async () => send.begin(this.target, plan, await this.location.current()), null);
    });
    return form;
  }

  private async act(make: () => Promise<Parameters<Outbox['take']>[0]>, said: Parameters<typeof t>[0] | null): Promise<void> {
    const action = await make();
    if (said) this.live.textContent = t(said, { at: formatDateTime(action.takenAt) });
    await this.outbox.take(action);
    // What the action did comes back on the stream; read it too, for a stream that lags.
    window.setTimeout(() => void this.read(), 1500);
  }

  private tick(): void {
    const s = this.session;
    if (!s || !this.countdownLine || !this.dueLine) return;
    const now = Date.now();
    const c = countdown(s, now);
    this.countdownLine.textContent = c.text;
    const state = stateAt(s, now);
    this.element.dataset.due = state;
    const words =
      state === 'Alerting' ? `${t('worker.session.overdue')} ${t('worker.session.alerted')}`
      : state === 'Overdue' ? t('worker.session.overdue')
      : state === 'DueSoon' ? t('worker.session.dueSoon')
      : '';
    if (this.dueLine.textContent !== words) this.dueLine.textContent = words;
    const dueKey = `${s.MonitoringSessionId}@${s.NextDueAt ?? ''}`;
    if ((state === 'Overdue' || state === 'DueSoon' || state === 'Alerting') && this.alarmedFor !== dueKey) {
      this.alarmedFor = dueKey;
      alarm();
    }
  }
}

let audio: HTMLAudioElement | null = null;

/** Sound, vibration and a notification (where the person allowed them). */
function alarm(): void {
  navigator.vibrate?.([400, 200, 400, 200, 400]);
  try {
    audio ??= new Audio('/alert.wav');
    void audio.play().catch(() => undefined);
  } catch {
    // No audio here.
  }
  if (!('Notification' in window) || Notification.permission !== 'granted') return;
  const options = { body: t('worker.session.notifyBody'), tag: 'safetrack-check-in', renotify: true } as NotificationOptions;
  void navigator.serviceWorker?.getRegistration('/worker/')
    .then(async (r) => {
      if (r) await r.showNotification(t('worker.session.notifyTitle'), options);
      else new Notification(t('worker.session.notifyTitle'), options);
    })
    .catch(() => undefined);
}

/** Asked on the person's own gesture (starting a session), never on opening the page. */
function askToNotify(): void {
  if ('Notification' in window && Notification.permission === 'default') void Notification.requestPermission().catch(() => undefined);
}
