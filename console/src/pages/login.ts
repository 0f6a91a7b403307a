import { h } from '../dom';
import { t, type Key } from '../i18n';
import { login } from '../session';
import { themeControl } from '../theme';

const MESSAGES: Record<string, Key> = {
  invalid: 'login.invalid',
  locked: 'login.locked',
  noPortal: 'login.noPortal',
  expired: 'login.expired',
};

/** The login page; `onDone` goes on to where the user was going. */
export function loginPage(outlet: HTMLElement, onDone: () => void): void {
  const params = new URLSearchParams(location.search);
  const message = h('p', { class: 'message', role: 'alert', 'data-testid': 'login-message' });
  if (params.get('expired')) message.textContent = t('login.expired');
  const username = h('input', { id: 'username', name: 'username', autocomplete: 'username', required: true });
  const password = h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const submit = h('button', { type: 'submit' }, t('login.submit'));
  const form = h(
    'form',
    { class: 'login', novalidate: true },
    h('h1', {}, t('login.heading')),
    message,
    h('label', { for: 'username' }, t('login.username')),
    username,
    h('label', { for: 'password' }, t('login.password')),
    password,
    submit,
    h('div', { class: 'login-theme' }, themeControl()),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    submit.disabled = true;
    message.textContent = '';
    void login(username.value, password.value).then((result) => {
      submit.disabled = false;
      if (result.ok) return onDone();
      message.dataset.reason = result.why;
      const key = MESSAGES[result.why];
      message.textContent = key ? t(key) : t('login.failed', { detail: result.detail });
      password.value = '';
      password.focus();
    });
  });
  outlet.append(h('main', { class: 'login-page' }, form));
  username.focus();
}
