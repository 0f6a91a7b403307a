// A few lines of DOM building instead of a UI framework.
type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | EventListener | null | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (/^on/i.test(name)) {
      // A listener, never an inline handler (text written as script).
      if (typeof value !== 'function') throw new Error(`h: ${name} must be a listener`);
      el.addEventListener(name.slice(2), value);
    } else if (/^srcdoc$/i.test(name)) {
      throw new Error('h: srcdoc is HTML');
    } else if (value === true) {
      el.setAttribute(name, '');
    } else {
      el.setAttribute(name, String(value));
    }
  }
  append(el, ...children);
  return el;
}

export function append(el: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

const VALUES = 'input, select, textarea';
const FOCUSABLE = 'a[href], button, input, select, textarea, [tabindex]';
type Entry = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
type Caret = { start: number; end: number; direction: 'forward' | 'backward' | 'none' };

/**
 * Puts `rows` in place of `body`'s rows, each row naming its record in the attribute
 * `key` (`data-user`, …). A row whose record is still there keeps what the person put
 * into it: a value they changed, and the focus with its caret; the focused field keeps
 * its text whatever the record says. Rows of records no longer listed go. The new rows'
 * controls are matched to the old ones by kind and name (`name`, `aria-label`), then by
 * position; no event is fired.
 */
export function replaceRows(body: Element, rows: readonly Element[], key: string): void {
  const active = body.ownerDocument.activeElement;
  const focused = active instanceof HTMLElement && active !== body && body.contains(active) ? active : null;
  const caret = focused ? caretOf(focused) : null;
  // Only the rows holding something of the person's are looked at again.
  const held = new Map<string, Element>();
  const hold = (el: Element): void => {
    const row = rowOf(body, el);
    const id = row?.getAttribute(key);
    if (row && id && !held.has(id)) held.set(id, row);
  };
  if (focused) hold(focused);
  for (const el of body.querySelectorAll<Entry>(VALUES)) if (changed(el)) hold(el);
  body.replaceChildren(...rows);
  if (!held.size) return;
  for (const row of rows) {
    const id = row.getAttribute(key);
    const old = id ? held.get(id) : undefined;
    if (!id || !old) continue;
    held.delete(id);
    for (const el of old.querySelectorAll<Entry>(VALUES)) {
      if (el !== focused && !changed(el)) continue;
      const to = counterpart(old, row, el, VALUES, false);
      if (to && to !== el) copyValue(el, to as Entry);
    }
    if (focused && old.contains(focused)) {
      const to = counterpart(old, row, focused, FOCUSABLE, true);
      if (to instanceof HTMLElement) {
        to.focus();
        if (caret && (to instanceof HTMLInputElement || to instanceof HTMLTextAreaElement)) {
          try {
            to.setSelectionRange(caret.start, caret.end, caret.direction);
          } catch {
            // An input kind without a caret (email, number): the focus is enough.
          }
        }
      }
    }
  }
}

function rowOf(body: Element, el: Element): Element | null {
  let at: Element | null = el;
  while (at && at.parentElement !== body) at = at.parentElement;
  return at;
}

/** Whether the person changed a control from the value it was built with. */
function changed(el: Entry): boolean {
  if (el instanceof HTMLSelectElement) {
    // The options built chosen carry the `selected` attribute (`defaultSelected`).
    const options = [...el.options];
    if (el.multiple) return options.some((o) => o.selected !== o.hasAttribute('selected'));
    const built = options.filter((o) => o.hasAttribute('selected')).pop() ?? options.find((o) => !o.disabled);
    return el.value !== (built?.value ?? '');
  }
  if (el instanceof HTMLInputElement) {
    if (el.type === 'checkbox' || el.type === 'radio') return el.checked !== el.defaultChecked;
    if (el.type === 'file') return false;
  }
  return el.value !== el.defaultValue;
}

/** `from`'s value into `to`, a control of the same kind. */
function copyValue(from: Entry, to: Entry): void {
  if (from instanceof HTMLSelectElement && to instanceof HTMLSelectElement) {
    const chosen = [...from.selectedOptions].map((o) => o.value);
    // A choice the new row no longer offers leaves the new row's.
    if (!chosen.every((v) => [...to.options].some((o) => o.value === v))) return;
    for (const o of to.options) o.selected = chosen.includes(o.value);
  } else if (from instanceof HTMLInputElement && to instanceof HTMLInputElement && (from.type === 'checkbox' || from.type === 'radio')) {
    to.checked = from.checked;
  } else if (to.value !== from.value) {
    to.value = from.value;
  }
}

function caretOf(el: HTMLElement): Caret | null {
  if (!(el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement)) return null;
  try {
    if (el.selectionStart === null || el.selectionEnd === null) return null;
    return { start: el.selectionStart, end: el.selectionEnd, direction: el.selectionDirection ?? 'none' };
  } catch {
    return null;
  }
}

function kind(el: Element): string {
  const type = el instanceof HTMLInputElement || el instanceof HTMLButtonElement ? el.type : '';
  return `${el.tagName}|${type}`;
}

function name(el: Element): string {
  return `${kind(el)}|${el.getAttribute('name') ?? el.getAttribute('aria-label') ?? el.getAttribute('href') ?? ''}`;
}

/**
 * `el`'s place in the new row: the control of the same kind and name (the nth of them),
 * else the nth of its kind when both rows have as many, else (`anyKind`) the nth control.
 */
function counterpart(old: Element, row: Element, el: Element, selector: string, anyKind: boolean): Element | null {
  const before = [...old.querySelectorAll(selector)];
  const after = [...row.querySelectorAll(selector)];
  for (const same of [name, kind]) {
    const mine = before.filter((c) => same(c) === same(el));
    const theirs = after.filter((c) => same(c) === same(el));
    if (same === kind && mine.length !== theirs.length) break;
    const match = theirs[mine.indexOf(el)];
    if (match) return match;
  }
  if (!anyKind || !after.length) return null;
  return after[Math.min(before.indexOf(el), after.length - 1)] ?? null;
}
