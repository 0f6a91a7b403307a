// Event notifications: the list (enable/disable in place), and a form whose events
// expression is checked as it is typed by the API's own validation
// (`POST …/eventnotifications/validate`), its message and position shown beside it.
import { api, ApiError, v2 } from '../../api';
import { h, replaceRows } from '../../dom';
import { t } from '../../i18n';
import { tenant } from '../../session';
import { mayConfigure } from '../../config/access';
import { FormErrors, checkbox, describeFailure, field, sectionNav, statusLine, textInput } from '../../config/form';
import { expressionPosition, fieldMessages, markPosition } from '../../config/problems';
import { RecipientEditor, loadDirectory, type Directory } from '../../config/recipient-editor';
import type { Recipient } from '../../config/recipients';

export interface EventNotification {
  NotificationId?: string | null;
  NotificationName?: string | null;
  NotificationText?: string | null;
  NotificationDisabled?: boolean;
  Recipients?: Recipient[] | null;
  EventsExpression?: string | null;
  TimeZoneId?: string | null;
  RaiseAlert?: boolean;
  Severity?: string | null;
  DeviceType?: string | null;
  Devices?: string | null;
}

const SEVERITIES = [
  ['0', 'severity.None'],
  ['1', 'severity.Warning'],
  ['2', 'severity.High'],
] as const;

/** Waiting this long after the last keystroke before asking the API. */
const TYPING_PAUSE_MS = 300;

const blankToNull = (s: string): string | null => (s.trim() === '' ? null : s);

export function notificationsPage(outlet: HTMLElement): () => void {
  const tc = tenant();
  const manage = mayConfigure();
  const status = statusLine('notification-status');
  const rows = h('tbody');
  const table = h(
    'table',
    { class: 'records', 'data-testid': 'notification-list' },
    h('caption', { class: 'visually-hidden' }, t('config.notifications.heading')),
    h('thead', {}, h('tr', {},
      ...(['config.notifications.name', 'config.notifications.expression', 'config.notifications.severity', 'config.notifications.state', 'config.actions'] as const)
        .map((k) => h('th', { scope: 'col' }, t(k))))),
    rows,
  );
  const newButton = h('button', { type: 'button', 'data-testid': 'new-notification' }, t('config.notifications.new'));

  const errors = new FormErrors();
  const name = textInput('', { required: true, maxlength: 200, autocomplete: 'off' });
  const text = h('textarea', { rows: 2, maxlength: 4000 });
  const expression = h('textarea', { rows: 3, spellcheck: 'false', autocomplete: 'off', required: true, 'data-testid': 'expression' });
  const check = h('div', { class: 'expression-check', role: 'status', 'aria-live': 'polite', 'data-testid': 'expression-check' });
  const zone = textInput('', { autocomplete: 'off', placeholder: 'UTC' });
  const severity = h('select', {}, ...SEVERITIES.map(([v, k]) => h('option', { value: v }, t(k))));
  const raise = checkbox(false);
  const disabled = checkbox(false);
  const deviceType = textInput('', { autocomplete: 'off' });
  const devices = textInput('', { autocomplete: 'off' });
  let directory: Directory = { contacts: new Map(), lists: new Map(), groups: [], types: [] };
  const recipients = new RecipientEditor(directory, errors, manage);
  const heading = h('h2', { tabindex: -1, id: 'notification-editor-heading' });
  const form = h(
    'form',
    { class: 'config-form', 'data-testid': 'notification-form', novalidate: true, hidden: true, 'aria-labelledby': heading.id },
    heading,
    errors.summary,
    field(t('config.notifications.name'), name, errors, 'NotificationName'),
    field(t('config.notifications.expression'), expression, errors, 'EventsExpression', t('config.notifications.expressionHint')),
    check,
    field(t('config.notifications.text'), text, errors, 'NotificationText'),
    field(t('config.notifications.severity'), severity, errors, 'Severity'),
    field(t('config.notifications.raiseAlert'), raise, errors, 'RaiseAlert'),
    field(t('config.notifications.disabled'), disabled, errors, 'NotificationDisabled'),
    field(t('config.notifications.timeZone'), zone, errors, 'TimeZoneId', t('config.notifications.timeZoneHint')),
    field(t('config.notifications.deviceType'), deviceType, errors, 'DeviceType'),
    field(t('config.notifications.devices'), devices, errors, 'Devices', t('config.notifications.devicesHint')),
    recipients.element,
    h('div', { class: 'buttons' },
      h('button', { type: 'submit', 'data-testid': 'save-notification' }, t('config.save')),
      h('button', { type: 'button', onclick: () => close() }, t('config.cancel'))),
  );

  outlet.append(
    h('main', { class: 'config-page' },
      h('h1', {}, t('config.notifications.heading')),
      sectionNav('/config/notifications'),
      status,
      manage ? newButton : h('p', { class: 'hint' }, t('config.readOnly')),
      table,
      form),
  );

  let list: EventNotification[] = [];
  let editing: EventNotification | null = null;

  const record = (): EventNotification => ({
    NotificationName: name.value,
    NotificationText: blankToNull(text.value),
    EventsExpression: expression.value,
    TimeZoneId: blankToNull(zone.value),
    Severity: severity.value,
    RaiseAlert: raise.checked,
    NotificationDisabled: disabled.checked,
    DeviceType: blankToNull(deviceType.value),
    Devices: blankToNull(devices.value),
    Recipients: recipients.get(),
  });

  // ---- the expression, checked as it is typed ----
  let timer = 0;
  let inFlight: AbortController | null = null;
  const showCheck = (messages: string[]): void => {
    errors.showField('EventsExpression', messages);
    if (!messages.length) {
      check.dataset.state = 'valid';
      check.replaceChildren(t('config.notifications.expressionValid'));
      return;
    }
    check.dataset.state = 'invalid';
    const position = expressionPosition(messages[0] ?? '');
    const marked = position === null ? null : markPosition(expression.value, position);
    check.replaceChildren(
      marked
        ? h('p', { class: 'expression-mark' },
            h('span', { class: 'visually-hidden' }, t('config.notifications.at', { position: position ?? 0 })),
            h('code', {}, marked[0], h('mark', {}, marked[1] || '\u2003'), marked[2]))
        : '',
    );
  };
  const checkNow = async (): Promise<void> => {
    inFlight?.abort();
    const controller = new AbortController();
    inFlight = controller;
    if (!expression.value.trim()) {
      showCheck([]);
      check.replaceChildren();
      delete check.dataset.state;
      return;
    }
    check.dataset.state = 'checking';
    try {
      await api.request('POST', `${v2(tc, 'eventnotifications')}/validate`, record(), { signal: controller.signal });
      if (inFlight === controller) showCheck([]);
    } catch (error) {
      if (inFlight !== controller) return;
      if (error instanceof ApiError && error.status === 400) {
        showCheck(fieldMessages(error.problem).filter((m) => m.field === 'EventsExpression').map((m) => m.message));
      } else if (!(error instanceof DOMException)) {
        delete check.dataset.state;
        check.replaceChildren(describeFailure(error));
      }
    }
  };
  expression.addEventListener('input', () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => void checkNow(), TYPING_PAUSE_MS);
  });

  const open = (n: EventNotification | null): void => {
    editing = n;
    errors.clear();
    check.replaceChildren();
    delete check.dataset.state;
    form.hidden = false;
    heading.textContent = n ? t('config.notifications.editing', { name: n.NotificationName ?? '' }) : t('config.notifications.new');
    name.value = n?.NotificationName ?? '';
    text.value = n?.NotificationText ?? '';
    expression.value = n?.EventsExpression ?? '';
    zone.value = n?.TimeZoneId ?? '';
    severity.value = n?.Severity ?? '0';
    raise.checked = !!n?.RaiseAlert;
    disabled.checked = !!n?.NotificationDisabled;
    deviceType.value = n?.DeviceType ?? '';
    devices.value = n?.Devices ?? '';
    recipients.set(n?.Recipients);
    heading.focus();
  };
  function close(): void {
    window.clearTimeout(timer);
    inFlight?.abort();
    editing = null;
    form.hidden = true;
  }

  const save = (n: EventNotification, id: string | null | undefined): Promise<unknown> =>
    id ? api.request('PUT', v2(tc, 'eventnotifications', id), n) : api.post(v2(tc, 'eventnotifications'), n);

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    window.clearTimeout(timer);
    inFlight?.abort();
    errors.clear();
    const body = record();
    void save(body, editing?.NotificationId)
      .then(async () => {
        status.textContent = t('config.saved', { name: body.NotificationName ?? '' });
        close();
        await load();
      })
      .catch((error: unknown) => {
        errors.show(error);
        (form.querySelector('[aria-invalid=true]') as HTMLElement | null)?.focus();
      });
  });

  const toggle = async (n: EventNotification): Promise<void> => {
    const { NotificationId: id, ...rest } = n;
    try {
      await save({ ...rest, NotificationDisabled: !n.NotificationDisabled }, id);
      status.textContent = t(n.NotificationDisabled ? 'config.notifications.enabledNamed' : 'config.notifications.disabledNamed', { name: n.NotificationName ?? '' });
      await load();
    } catch (error) {
      status.textContent = describeFailure(error);
    }
  };

  const remove = async (n: EventNotification): Promise<void> => {
    if (!n.NotificationId || !confirm(t('config.confirmDelete', { name: n.NotificationName ?? '' }))) return;
    try {
      await api.delete(v2(tc, 'eventnotifications', n.NotificationId));
      status.textContent = t('config.deleted', { name: n.NotificationName ?? '' });
      if (editing?.NotificationId === n.NotificationId) close();
      await load();
    } catch (error) {
      status.textContent = describeFailure(error);
    }
  };

  const severityName = (s: string | null | undefined): string => {
    const found = SEVERITIES.find(([v]) => v === s);
    return found ? t(found[1]) : s ?? '';
  };

  const render = (): void => {
    replaceRows(
      rows,
      list.map((n) => {
        const label = { name: n.NotificationName ?? '' };
        return h('tr', { 'data-notification': n.NotificationId ?? '', 'data-disabled': String(!!n.NotificationDisabled) },
          h('td', {}, n.NotificationName ?? ''),
          h('td', { 'data-label': t('config.notifications.expression') }, h('code', {}, n.EventsExpression ?? '')),
          h('td', { 'data-label': t('config.notifications.severity') }, severityName(n.Severity), n.RaiseAlert ? ` · ${t('config.notifications.raisesAlert')}` : ''),
          h('td', { 'data-label': t('config.notifications.state') }, n.NotificationDisabled ? t('config.notifications.off') : t('config.notifications.on')),
          h('td', { class: 'row-actions' },
            h('button', { type: 'button', onclick: () => open(n), 'aria-label': t(manage ? 'config.editNamed' : 'config.showNamed', label) }, manage ? t('config.edit') : t('config.show')),
            manage
              ? h('button', { type: 'button', onclick: () => void toggle(n), 'aria-label': t(n.NotificationDisabled ? 'config.notifications.enableNamed' : 'config.notifications.disableNamed', label) },
                  n.NotificationDisabled ? t('config.notifications.enable') : t('config.notifications.disable'))
              : null,
            manage ? h('button', { type: 'button', onclick: () => void remove(n), 'aria-label': t('config.deleteNamed', label) }, t('config.delete')) : null));
      }),
      'data-notification',
    );
    if (!list.length) rows.append(h('tr', {}, h('td', { colspan: 5 }, t('config.notifications.empty'))));
  };

  const load = async (): Promise<void> => {
    try {
      list = await api.get<EventNotification[]>(v2(tc, 'eventnotifications'));
      render();
    } catch (error) {
      status.textContent = describeFailure(error);
    }
  };

  newButton.addEventListener('click', () => open(null));
  if (!manage) form.querySelectorAll<HTMLElement>('input, select, textarea, button[type=submit]').forEach((c) => c.setAttribute('disabled', ''));
  void load();
  void loadDirectory(tc).then((d) => {
    directory = d;
    recipients.setDirectory(directory);
  });
  return () => {
    window.clearTimeout(timer);
    inFlight?.abort();
  };
}
