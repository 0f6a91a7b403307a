// The worker app's login: the console's (`/auth/session`, session.ts), in the app's words,
// staying on `/worker/`.
import type { Session } from '../api';
import { h } from '../dom';
import { t, type Key } from '../i18n';
import { login } from '../session';

const MESSAGES: Record<string, Key> = {
  invalid: 'login.invalid',
  locked: 'login.locked',
  noPortal: 'login.noPortal',
  network: 'worker.offline',
};

export function workerLogin(outlet: HTMLElement, done: (s: Session) => void): void {
  const message = h('p', { class: 'message', role: 'alert', 'data-testid': 'login-message' });
  const username = h('input', { id: 'username', name: 'username', autocomplete: 'username', required: true, inputmode: 'email' });
  const password = h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const submit = h('button', { type: 'submit', class: 'worker-big' }, t('login.submit'));
  const form = h('form', { class: 'login worker-form', novalidate: true },
    h('h1', {}, t('worker.loginHeading')), message,
    h('label', { for: 'username' }, t('login.username')), username,
    h('label', { for: 'password' }, t('login.password')), password,
    submit);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    submit.disabled = true;
    message.textContent = '';
    void login(username.value, password.value).then((result) => {
      submit.disabled = false;
      if (result.ok) return done(result.session);
      message.dataset.reason = result.why;
      const key = MESSAGES[result.why];
      message.textContent = key ? t(key) : t('login.failed', { detail: result.detail });
      password.value = '';
      password.focus();
    });
  });
  outlet.append(h('main', { class: 'login-page worker-main' }, form));
  username.focus();
}
