// What the configuration screens' forms share: labelled controls, a 400's messages beside
// the control that holds each field (and the rest in a summary), the section navigation.
import { ApiError, ForbiddenError, NetworkError, NotFoundError, ConflictError } from '../api';
import { h } from '../dom';
import { t } from '../i18n';
import { fieldMessages, placeMessages } from './problems';

let serial = 0;
export function uid(prefix: string): string {
  return `${prefix}-${++serial}`;
}

interface Slot {
  box: HTMLElement;
  controls: HTMLElement[];
}

/** A form's error places: one per API field name, plus a summary for the rest. */
export class FormErrors {
  readonly summary = h('div', { class: 'form-summary message', role: 'alert', 'data-testid': 'form-summary' });
  private readonly slots = new Map<string, Slot>();

  /** The place for `field`'s messages, described by (and marking invalid) `controls`. */
  slot(field: string, ...controls: HTMLElement[]): HTMLElement {
    const held = this.slots.get(field);
    if (held) {
      held.controls.push(...controls);
      this.describe(held.box, controls);
      return held.box;
    }
    const box = h('p', { class: 'field-error message', id: uid('err'), 'data-field': field });
    this.slots.set(field, { box, controls });
    this.describe(box, controls);
    return box;
  }

  /** Drops the slots whose field starts with `prefix` (a list's rows were redrawn). */
  forget(prefix: string): void {
    for (const key of [...this.slots.keys()]) if (key.startsWith(prefix)) this.slots.delete(key);
  }

  private describe(box: HTMLElement, controls: HTMLElement[]): void {
    for (const c of controls) {
      const ids = new Set((c.getAttribute('aria-describedby') ?? '').split(' ').filter(Boolean));
      ids.add(box.id);
      c.setAttribute('aria-describedby', [...ids].join(' '));
    }
  }

  clear(): void {
    this.summary.replaceChildren();
    for (const { box, controls } of this.slots.values()) {
      box.replaceChildren();
      for (const c of controls) c.removeAttribute('aria-invalid');
    }
  }

  /** Shows what went wrong: a 400's fields in place, anything else in the summary. */
  show(error: unknown): void {
    this.clear();
    if (error instanceof ApiError && error.status === 400) {
      const messages = fieldMessages(error.problem);
      const { placed, unplaced } = placeMessages(messages, this.slots.keys());
      for (const [field, texts] of placed) {
        const slot = this.slots.get(field);
        if (!slot) continue;
        slot.box.replaceChildren(texts.join(' '));
        for (const c of slot.controls) c.setAttribute('aria-invalid', 'true');
      }
      const rest = unplaced.map((m) => (m.field ? `${m.field}: ${m.message}` : m.message));
      if (rest.length === 0 && placed.size === 0) rest.push(error.message);
      if (rest.length) this.summary.replaceChildren(h('ul', {}, ...rest.map((r) => h('li', {}, r))));
      if (placed.size || rest.length) {
        this.summary.prepend(h('p', {}, t('config.invalid')));
      }
      return;
    }
    this.summary.replaceChildren(describeFailure(error));
  }

  /** Shows `messages` in `field`'s place only (the others keep theirs). */
  showField(field: string, messages: string[]): void {
    const slot = this.slots.get(field);
    if (!slot) return;
    slot.box.replaceChildren(messages.join(' '));
    for (const c of slot.controls) {
      if (messages.length) c.setAttribute('aria-invalid', 'true');
      else c.removeAttribute('aria-invalid');
    }
  }
}

/** A failure other than a 400, in words. */
export function describeFailure(error: unknown): string {
  if (error instanceof ForbiddenError) return t('config.forbidden', { detail: error.message });
  if (error instanceof NotFoundError) return t('config.notFound');
  if (error instanceof ConflictError) return t('config.conflict', { detail: error.message });
  if (error instanceof NetworkError) return t('config.network');
  if (error instanceof ApiError) return t('config.failed', { detail: error.message });
  return t('config.failed', { detail: String(error) });
}

/** A labelled control with its error place. */
export function field(
  label: string,
  control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement,
  errors: FormErrors,
  name: string,
  hint?: string,
): HTMLElement {
  control.id ||= uid('f');
  const hintBox = hint ? h('p', { class: 'hint', id: uid('hint') }, hint) : null;
  if (hintBox) control.setAttribute('aria-describedby', hintBox.id);
  const box = errors.slot(name, control);
  const isCheck = control instanceof HTMLInputElement && control.type === 'checkbox';
  return isCheck
    ? h('div', { class: 'field check' }, control, h('label', { for: control.id }, label), hintBox, box)
    : h('div', { class: 'field' }, h('label', { for: control.id }, label), control, hintBox, box);
}

const SECTIONS = [
  ['/config/geofences', 'config.nav.geofences'],
  ['/config/notifications', 'config.nav.notifications'],
  ['/config/addressbook', 'config.nav.addressBook'],
] as const;

/** The configuration sections, the current one marked. */
export function sectionNav(current: string): HTMLElement {
  return h(
    'nav',
    { class: 'config-nav', 'aria-label': t('config.nav.label') },
    ...SECTIONS.map(([href, key]) =>
      h('a', { href, 'data-link': true, 'aria-current': href === current ? 'page' : null }, t(key)),
    ),
  );
}

/** A status line read out when it changes (saved, deleted, …). */
export function statusLine(testid: string): HTMLElement {
  return h('p', { class: 'status-line', role: 'status', 'data-testid': testid });
}

export function checkbox(checked: boolean): HTMLInputElement {
  const c = h('input', { type: 'checkbox' });
  c.checked = checked;
  return c;
}

export function textInput(value: string | null | undefined, attrs: Record<string, string | number | boolean> = {}): HTMLInputElement {
  const i = h('input', { type: 'text', ...attrs });
  i.value = value ?? '';
  return i;
}
