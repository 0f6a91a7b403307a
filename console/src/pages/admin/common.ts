// What the admin pages share: labelled fields, tables, and the API's answers put into
// words (a 400's fields, a 403, a 409/412) next to the control that caused them.
import { ApiError, ConflictError, ForbiddenError, NetworkError, ValidationError } from '../../api';
import { h } from '../../dom';
import { catalogues, t, type Key } from '../../i18n';

let serial = 0;
/** A unique element id (labels point at their inputs). */
export function uid(prefix: string): string {
  serial += 1;
  return `${prefix}-${serial}`;
}

type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/** A label and its control, wrapped. */
export function field(label: string, control: Control, hint?: string): HTMLElement {
  if (!control.id) control.id = uid('f');
  const wrap = h('div', { class: 'field' }, h('label', { for: control.id }, label), control);
  if (hint) {
    const hintId = uid('hint');
    control.setAttribute('aria-describedby', hintId);
    wrap.append(h('small', { id: hintId, class: 'hint' }, hint));
  }
  return wrap;
}

export function checkbox(label: string, checked = false, attrs: Record<string, string> = {}): { wrap: HTMLElement; input: HTMLInputElement } {
  // Built checked as its default: a reset or a redrawn row tells it from a changed one.
  const input = h('input', { type: 'checkbox', id: uid('c'), checked, ...attrs });
  return { wrap: h('label', { class: 'check', for: input.id }, input, ' ', label), input };
}

export function select(options: Array<[string, string]>, value = '', attrs: Record<string, string | boolean> = {}): HTMLSelectElement {
  // An absent value keeps the first option (a blank select would name nothing). The
  // chosen option is marked `selected`, its default: a reset or a redrawn row tells it
  // from a changed one.
  return h('select', attrs, ...options.map(([v, text]) => h('option', { value: v, selected: v === value }, text)));
}

export function table(caption: string, headers: string[], testid: string): { table: HTMLTableElement; body: HTMLTableSectionElement } {
  const body = h('tbody');
  const el = h(
    'table',
    { class: 'admin-table', 'data-testid': testid },
    h('caption', { class: 'visually-hidden' }, caption),
    h('thead', {}, h('tr', {}, ...headers.map((c) => h('th', { scope: 'col' }, c)))),
    body,
  );
  return { table: el, body };
}

/** A cell whose content is labelled by its column on narrow screens (CSS reads data-label). */
export function cell(label: string, ...content: Array<Node | string>): HTMLTableCellElement {
  return h('td', { 'data-label': label }, ...content);
}

/** An address as a person reads it: without the `mail:`/`sms:` prefix the API keeps. */
export function plainAddress(address: string | null | undefined): string {
  const text = address ?? '';
  return text.replace(/^\s*(mail|sms):/i, '');
}

/**
 * A field the API names (`EmergencyContactTelephoneNumber`, `Recipients[2].ContactId`)
 * in words: the catalogue's label when it has one (`field.<Name>`), else the name split
 * into words; a position in a list is counted from 1.
 */
export function fieldWords(path: string): string {
  return path
    .split('.')
    .map((part) => {
      const m = /^([A-Za-z0-9_]+)(?:\[(\d+)\])?$/.exec(part);
      if (!m) return part;
      const [, name = '', index] = m;
      const key = `field.${name}` as Key;
      const words = key in (catalogues.en ?? {}) ? t(key) : name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/^./, (c) => c.toUpperCase());
      return index === undefined ? words : `${words} ${Number(index) + 1}`;
    })
    .join(' › ');
}

/** The API's refusal in words: the problem's detail and each named field. */
export function problemText(e: unknown): string {
  if (e instanceof NetworkError) return t('error.network');
  if (e instanceof ForbiddenError) return t('admin.forbidden', { detail: e.message });
  if (e instanceof ConflictError) return t('admin.conflict', { detail: e.message });
  if (e instanceof ValidationError) {
    const fields = fieldErrors(e).map(([f, m]) => (f ? `${fieldWords(f)}: ${m}` : m));
    return fields.length ? t('admin.invalid', { detail: fields.join('; ') }) : t('admin.invalid', { detail: e.message });
  }
  if (e instanceof ApiError) return t('error.generic', { detail: e.message });
  return t('error.generic', { detail: String(e) });
}

/** `[field, message]` pairs of a 400 (the problem's `errors[]`). */
export function fieldErrors(e: ApiError): Array<[string, string]> {
  return (e.problem.errors ?? []).map((x) => [x.field, x.message]);
}

/** A live region for what an action did (role=status) or why it failed (role=alert). */
export function resultLine(testid: string): { el: HTMLElement; ok(text: string): void; fail(e: unknown): void; clear(): void } {
  const el = h('p', { class: 'action-result', 'aria-live': 'polite', 'data-testid': testid });
  return {
    el,
    ok(text) {
      el.className = 'action-result ok';
      el.dataset.state = 'ok';
      el.textContent = text;
    },
    fail(e) {
      el.className = 'action-result error';
      el.dataset.state = 'error';
      el.textContent = problemText(e);
    },
    clear() {
      el.className = 'action-result';
      delete el.dataset.state;
      el.textContent = '';
    },
  };
}

export function page(testid: string, heading: string, ...children: Array<Node | null | false>): HTMLElement {
  return h('main', { class: 'admin-page', 'data-testid': testid }, h('h1', {}, heading), ...children);
}
