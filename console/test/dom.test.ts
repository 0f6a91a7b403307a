// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from 'vitest';
import { h, replaceRows } from '../src/dom';

// A users-like row: its record's id, a select built on the stored role, a password field
// and two buttons whose label names the user.
const row = (user: string, role = 'User', disabled = false): HTMLTableRowElement =>
  h('tr', { 'data-user': user },
    h('td', {}, user),
    h('td', {},
      h('select', { 'aria-label': `Role of ${user}` },
        ...['User', 'ReadOnly'].map((r) => h('option', { value: r, selected: r === role }, r))),
      h('input', { type: 'password', 'aria-label': `Password of ${user}` }),
      h('button', { type: 'button', 'aria-label': `${disabled ? 'Enable' : 'Disable'} ${user}` }, 'x'),
      h('button', { type: 'button', 'aria-label': `Reset ${user}` }, 'y')));

const q = <T extends Element>(body: Element, user: string, selector: string): T =>
  body.querySelector<T>(`tr[data-user="${user}"] ${selector}`) as T;

describe('replaceRows', () => {
  let body: HTMLTableSectionElement;
  beforeEach(() => {
    body = h('tbody');
    document.body.replaceChildren(h('table', {}, body));
    body.append(row('ann'), row('bob'), row('cy'));
  });

  it('keeps typed text, the focus and the caret of a row still listed', () => {
    const pw = q<HTMLInputElement>(body, 'bob', 'input');
    pw.focus();
    pw.value = 'half-typ';
    pw.setSelectionRange(2, 4);
    replaceRows(body, [row('ann'), row('bob'), row('cy')], 'data-user');
    const now = q<HTMLInputElement>(body, 'bob', 'input');
    expect(now).not.toBe(pw);
    expect(now.value).toBe('half-typ');
    expect(document.activeElement).toBe(now);
    expect([now.selectionStart, now.selectionEnd]).toEqual([2, 4]);
  });

  it('keeps a changed value of a row not focused, and leaves untouched ones to the record', () => {
    q<HTMLInputElement>(body, 'ann', 'input').value = 'typed before';
    q<HTMLSelectElement>(body, 'ann', 'select').value = 'ReadOnly';
    // cy's role changed on the server; nobody touched cy's select.
    replaceRows(body, [row('ann'), row('bob'), row('cy', 'ReadOnly')], 'data-user');
    expect(q<HTMLInputElement>(body, 'ann', 'input').value).toBe('typed before');
    expect(q<HTMLSelectElement>(body, 'ann', 'select').value).toBe('ReadOnly');
    expect(q<HTMLSelectElement>(body, 'cy', 'select').value).toBe('ReadOnly');
    expect(q<HTMLInputElement>(body, 'bob', 'input').value).toBe('');
  });

  it('the value just saved is the record’s: nothing stays marked as changed', () => {
    q<HTMLSelectElement>(body, 'ann', 'select').value = 'ReadOnly';
    replaceRows(body, [row('ann', 'ReadOnly'), row('bob'), row('cy')], 'data-user');
    replaceRows(body, [row('ann', 'User'), row('bob'), row('cy')], 'data-user');
    expect(q<HTMLSelectElement>(body, 'ann', 'select').value).toBe('User');
  });

  it('rows of removed records go; new ones come in the order given', () => {
    q<HTMLInputElement>(body, 'bob', 'input').value = 'lost with the row';
    replaceRows(body, [row('cy'), row('dee'), row('ann')], 'data-user');
    expect([...body.children].map((r) => r.getAttribute('data-user'))).toEqual(['cy', 'dee', 'ann']);
    expect(body.querySelectorAll('input')).toHaveLength(3);
    expect([...body.querySelectorAll('input')].every((i) => i.value === '')).toBe(true);
  });

  it('a focused button is found again by its name, or its place when the name changed', () => {
    q<HTMLButtonElement>(body, 'cy', 'button[aria-label="Reset cy"]').focus();
    replaceRows(body, [row('ann'), row('bob'), row('cy')], 'data-user');
    expect(document.activeElement).toBe(q(body, 'cy', 'button[aria-label="Reset cy"]'));
    q<HTMLButtonElement>(body, 'cy', 'button[aria-label="Disable cy"]').focus();
    replaceRows(body, [row('ann'), row('bob'), row('cy', 'User', true)], 'data-user');
    expect(document.activeElement).toBe(q(body, 'cy', 'button[aria-label="Enable cy"]'));
  });

  it('rows without a record id (an "empty" line) are simply replaced', () => {
    replaceRows(body, [h('tr', {}, h('td', {}, 'nothing'))], 'data-user');
    expect(body.textContent).toBe('nothing');
    replaceRows(body, [row('ann')], 'data-user');
    expect(body.querySelectorAll('tr')).toHaveLength(1);
  });
});

describe('h', () => {
  it('puts strings in as text, never as markup', () => {
    const el = h('p', { 'aria-label': '<b id=pwn>' }, '<img src=x onerror=alert(1)>', h('b', {}, '<i>'));
    expect(el.querySelector('img, i, #pwn')).toBeNull();
    expect(el.textContent).toBe('<img src=x onerror=alert(1)><i>');
  });

  it('refuses an inline handler or srcdoc', () => {
    expect(() => h('button', { onclick: 'alert(1)' })).toThrow(/listener/);
    expect(() => h('iframe', { srcdoc: '<script></script>' })).toThrow(/srcdoc/);
  });
});
