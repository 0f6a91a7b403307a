// Texts the operators sent to the device (MT `Text` messages), newest first, each with
// "Acknowledge": an MO `MessageAcknowledgement` naming the text (`Properties.MtMessageId`),
// sent through the outbox like everything else. The stream carries no MT messages, so
// they are read at the start, after a gap in the stream and every 20 s.
import { api, v2, type MoMessage, type MtMessage } from '../api';
import { clear, h } from '../dom';
import { formatDateTime } from '../format';
import { t } from '../i18n';
import * as send from './client';
import type { Target } from './client';
import type { Outbox } from './outbox';

export class Texts {
  readonly element: HTMLElement;
  private readonly list = h('ul', { class: 'worker-texts', 'data-testid': 'texts' });
  private texts: MtMessage[] = [];
  /** Texts acknowledged (read back from the device's messages, or just now here). */
  private readonly acknowledged = new Set<string>();
  private readonly timer: number;

  constructor(
    private readonly target: Target,
    private readonly outbox: Outbox,
  ) {
    this.element = h('section', { 'aria-labelledby': 'worker-texts-heading' },
      h('h2', { id: 'worker-texts-heading' }, t('worker.texts.heading')), this.list);
    this.timer = window.setInterval(() => void this.read(), 20_000);
    this.draw();
  }

  stop(): void {
    window.clearInterval(this.timer);
  }

  /** Something was sent: an acknowledgement may have gone. */
  sent(): void {
    this.draw();
  }

  async read(): Promise<void> {
    try {
      const path = v2(this.target.tenant, 'devices', this.target.deviceId, 'mtmessages');
      const texts = (await api.all<MtMessage>(path)).filter((m) => m.Type === 'Text' && m.MessageId);
      const since = texts.reduce((min, m) => (m.CreatedAt && m.CreatedAt < min ? m.CreatedAt : min), new Date().toISOString());
      if (texts.length > 0) {
        const mine = await api.all<MoMessage>(
          `${v2(this.target.tenant, 'devices', this.target.deviceId, 'momessages')}?fromDate=${encodeURIComponent(since)}`,
        );
        for (const m of mine) {
          const id = m.MessageType === 'MessageAcknowledgement' ? m.Properties?.['MtMessageId'] : undefined;
          if (id) this.acknowledged.add(id);
        }
      }
      this.texts = texts.sort((a, b) => (b.CreatedAt ?? '').localeCompare(a.CreatedAt ?? ''));
      this.draw();
    } catch {
      // Offline, or the session ended: the next read or the login says so.
    }
  }

  private draw(): void {
    clear(this.list);
    if (this.texts.length === 0) this.list.append(h('li', { class: 'worker-muted' }, t('worker.texts.none')));
    for (const m of this.texts) {
      const id = m.MessageId ?? '';
      const done = this.acknowledged.has(id);
      const button = h('button', {
        type: 'button',
        class: 'worker-wide',
        'aria-label': t('worker.texts.acknowledgeLabel', { text: m.Message ?? '' }),
        disabled: done,
      }, done ? t('worker.texts.acknowledged') : t('worker.texts.acknowledge'));
      button.addEventListener('click', () => {
        this.acknowledged.add(id);
        this.draw();
        void this.outbox.take(send.acknowledge(this.target, id));
      });
      this.list.append(
        h('li', { 'data-mt': id, 'data-acknowledged': done ? 'true' : 'false' },
          h('p', { class: 'worker-text' }, m.Message ?? ''),
          h('p', { class: 'worker-muted' }, formatDateTime(m.CreatedAt)),
          button),
      );
    }
  }
}
