// "Working alone" (DESIGN §11, issue 45): the board of current monitoring sessions for
// the person on duty — one row per session (person, device, where / what, state by shape
// and word, a countdown to the next due time ticking every second without a read, last
// check-in, planned end), most urgent first, the counts per state above. Actions: check
// in on the person's behalf (with a note), extend by 30 or 60 min, and — with
// ManageConfiguration — force stop with a typed reason. Kept live from the stream's
// `monitoring` events (live.monitoringEvent, docs/monitoring.md "Events"): each carries
// the session as it then was, so a new session appears, a check-in clears its state, an
// end removes its row, with no read (`SessionBoard`, ../monitoring.ts). Read in full only
// at the start, after a gap in the stream (live.resync) and every minute as a safety net.
// Rows are kept across changes: what was typed into a row's form, and the focus, stay.
import { api, ConflictError, NotFoundError, v2, type MonitoringForceStop, type MonitoringSession } from '../api';
import { h } from '../dom';
import { t } from '../i18n';
import { formatDateTime } from '../format';
import { ownTenant, tenant, session } from '../session';
import { may } from '../roles';
import * as live from '../live';
import type { DeviceRecord } from '../devices';
import { problemText, resultLine } from './admin/common';
import { devicePath } from './devices';
import {
  MONITORING_STATES,
  SessionBoard,
  agoWords,
  countByState,
  countdown,
  extendedDuration,
  isMonitoringState,
  personName,
  sessionKey,
  stateAt,
} from '../monitoring';

/**
 * How often the board reads the sessions again (ms): only a safety net — the stream's
 * `monitoring` events keep it, and a gap in the stream is read at once (live.resync).
 */
export const POLL_MS = 60_000;

const COLUMNS = ['state', 'person', 'device', 'note', 'due', 'lastCheckIn', 'plannedEnd', 'actions'] as const;
type Column = (typeof COLUMNS)[number];

const label = (c: Column): string => t(`monitoring.col.${c}`);

/** A session's state as a badge: its shape (style.css) and its word. */
export function monitoringBadge(state: string): HTMLElement {
  return h(
    'span',
    { class: 'status-badge', 'data-status': state, 'data-testid': 'monitoring-state' },
    isMonitoringState(state) ? t(`monitoring.state.${state}`) : state,
  );
}

/** The person a session watches: the device's assigned user (by name), else the user read by id. */
export async function personOf(s: MonitoringSession): Promise<string> {
  const d = (await live.device(s.TenantCode, s.DeviceId)) as DeviceRecord | null;
  const assigned = d?.AssignedUser;
  if (assigned && (!s.UserId || assigned.UserId === s.UserId)) return personName(assigned);
  if (s.UserId) return live.userName(await live.user(s.TenantCode, s.UserId));
  return '';
}

let serial = 0;

interface Row {
  session: MonitoringSession;
  tr: HTMLTableRowElement;
  /** The state shown (it turns by the clock between reads). */
  shown: string;
  update(s: MonitoringSession): void;
  tick(now: number): void;
  who(): string;
}

export function monitoringPage(outlet: HTMLElement): () => void {
  const tc = tenant();
  const mayAct = may(session(), 'DeviceMessages');
  const mayStop = may(session(), 'ManageConfiguration');
  const body = h('tbody');
  const table = h(
    'table',
    { class: 'monitoring', 'data-testid': 'monitoring-board', hidden: true },
    h('caption', { class: 'visually-hidden' }, t('monitoring.heading')),
    h('thead', {}, h('tr', {}, ...COLUMNS.map((c) => h('th', { scope: 'col' }, label(c))))),
    body,
  );
  const total = h('p', { class: 'count', 'data-testid': 'monitoring-total' });
  const counts = h('ul', { class: 'monitoring-counts', 'aria-label': t('monitoring.counts'), 'data-testid': 'monitoring-counts' });
  const loading = h('p', { class: 'hint', 'data-testid': 'monitoring-loading' }, t('monitoring.loading'));
  const failed = h('p', { class: 'message', role: 'alert', 'data-testid': 'monitoring-error', hidden: true });
  const empty = h('p', { class: 'empty', 'data-testid': 'monitoring-empty', hidden: true }, t('monitoring.empty'));
  const result = resultLine('monitoring-result');
  result.el.tabIndex = -1;
  const heading = h('h1', { tabindex: -1 }, t('monitoring.heading'));
  outlet.append(
    h(
      'main',
      { class: 'monitoring-page', 'data-testid': 'monitoring' },
      heading,
      h('p', { class: 'hint' }, t('monitoring.intro')),
      h('div', { class: 'monitoring-head' }, total, counts),
      result.el,
      loading,
      failed,
      empty,
      table,
    ),
  );

  // The sessions (kept from the stream, the writes' answers and the reads), and their rows.
  const board = new SessionBoard();
  const rows = new Map<string, Row>();
  let closed = false;
  let readOnce = false;
  // The stream follows the caller's own tenant and its subtenants; the board, the working
  // tenant's subtree (read once when it is another): an event of a tenant outside it is
  // not the board's, and one that comes before the subtree is known is read for.
  const subtree: Set<string> | null = tc === ownTenant() ? null : new Set([tc]);
  let subtreeKnown = subtree === null;
  if (subtree) {
    void api
      .all<{ TenantCode?: string | null }>(`${v2(tc, 'tenants')}?subtenants=true`)
      .then((list) => {
        for (const c of list) if (c.TenantCode) subtree?.add(c.TenantCode);
        subtreeKnown = true;
      })
      .catch(() => undefined);
  }
  /** Whether an event of `tenantCode` is the board's: yes, no, or not known yet. */
  const inScope = (tenantCode: string): boolean | null =>
    !subtree || subtree.has(tenantCode) ? true : subtreeKnown ? false : null;

  const drawCounts = (): void => {
    const now = Date.now();
    const n = countByState([...rows.values()].map((r) => ({ State: stateAt(r.session, now) })));
    counts.replaceChildren(
      ...MONITORING_STATES.map((s) =>
        h('li', { 'data-state': s }, monitoringBadge(s), ' ', h('strong', { 'data-testid': `count-${s}` }, String(n[s]))),
      ),
    );
    total.textContent = t('monitoring.total', { n: rows.size });
    empty.hidden = !readOnce || rows.size > 0;
    table.hidden = rows.size === 0;
    counts.hidden = rows.size === 0;
  };

  /** Puts the rows in urgency order, moving only those out of place (the focus stays). */
  const order = (): void => {
    const now = Date.now();
    const sorted = board.sorted(now).flatMap((s) => rows.get(sessionKey(s)) ?? []);
    const focused = document.activeElement instanceof HTMLElement && body.contains(document.activeElement) ? document.activeElement : null;
    sorted.forEach((row, i) => {
      const there = body.children[i];
      if (there !== row.tr) body.insertBefore(row.tr, there ?? null);
    });
    while (body.children.length > sorted.length) body.lastElementChild?.remove();
    if (focused && focused.isConnected && document.activeElement !== focused) focused.focus();
  };

  /** The rows as the board holds the sessions: updated in place, new ones added, ended ones gone. */
  const sync = (): void => {
    for (const key of board.keys()) {
      const s = board.get(key);
      if (!s) continue;
      const held = rows.get(key);
      if (held && held.session.MonitoringSessionId === s.MonitoringSessionId) {
        if (held.session !== s) held.update(s);
      } else {
        // A new session of the same device: a new row.
        held?.tr.remove();
        rows.set(key, row(s));
      }
    }
    for (const [key, r] of rows) {
      if (board.get(key)) continue;
      rows.delete(key);
      r.tr.remove();
    }
    order();
    drawCounts();
  };

  let reading: Promise<void> | null = null;
  let again = false;
  const read = (): Promise<void> => {
    if (reading) {
      again = true;
      return reading;
    }
    lastRead = Date.now();
    reading = (async () => {
      try {
        const since = board.mark();
        const list = await api.all<MonitoringSession>(`${v2(tc, 'monitoring')}?subtenants=true&pageSize=1000`);
        if (closed) return;
        readOnce = true;
        failed.hidden = true;
        for (const s of list) subtree?.add(s.TenantCode);
        board.read(list, since);
        sync();
      } catch (e) {
        if (closed) return;
        failed.textContent = t('monitoring.failed', { detail: problemText(e) });
        failed.hidden = false;
      } finally {
        loading.hidden = true;
        reading = null;
      }
      if (again && !closed) {
        again = false;
        await read();
      }
    })();
    return reading;
  };

  // A burst of events the board cannot place (a tenant it has not seen) is one read,
  // soon — at most one a second.
  let soon = 0;
  let lastRead = 0;
  const readSoon = (): void => {
    if (soon || closed) return;
    soon = window.setTimeout(() => {
      soon = 0;
      void read();
    }, Math.max(250, 1000 - (Date.now() - lastRead)));
  };
  /** A write's answer (a check-in, an extension): the board has it before its event. */
  const answered = (answer: MonitoringSession | undefined): void => {
    if (answer && answer.MonitoringSessionId && board.put(answer)) sync();
  };

  /** One row, kept while its session is current; its cells rewritten when the record changes. */
  function row(first: MonitoringSession): Row {
    const n = ++serial;
    const stateCell = cell('state');
    const person = h('span', { 'data-testid': 'person' }, first.DeviceId);
    const deviceLink = h('a', { href: devicePath(first), 'data-link': true, 'data-testid': 'device' }, first.DeviceId);
    const note = cell('note');
    const clock = h('span', { class: 'countdown', 'data-testid': 'countdown' });
    const dueTime = h('time', { class: 'due-at' });
    const last = h('span', { 'data-testid': 'last-check-in' });
    const lastCounts = h('span', { class: 'hint', 'data-testid': 'check-in-counts' });
    const planned = h('time', { 'data-testid': 'planned-end' });
    let s = first;
    let personText = '';
    let deviceName = '';
    const who = (): string => personText || deviceName || s.DeviceId;

    const tr = h(
      'tr',
      { 'data-session': sessionKey(first), 'data-session-id': first.MonitoringSessionId, 'data-device': first.DeviceId },
      stateCell,
      cell('person', person),
      cell('device', deviceLink),
      note,
      cell('due', clock, h('br'), dueTime),
      cell('lastCheckIn', last, h('br'), lastCounts),
      cell('plannedEnd', planned),
      cell('actions', ...actions()),
    );

    const r: Row = {
      session: first,
      tr,
      shown: '',
      who,
      update(next) {
        const changed = next.ETag !== s.ETag || next.Timestamp !== s.Timestamp;
        s = next;
        r.session = next;
        if (!changed && r.shown) {
          // The same version, read or heard again: only its state may have turned.
          r.tick(Date.now());
          return;
        }
        note.textContent = next.Note?.trim() ? next.Note : t('monitoring.noNote');
        note.classList.toggle('muted', !next.Note?.trim());
        dueTime.dateTime = next.NextDueAt ?? '';
        dueTime.textContent = next.NextDueAt ? formatDateTime(next.NextDueAt) : '';
        planned.dateTime = next.PlannedEndAt;
        planned.textContent = formatDateTime(next.PlannedEndAt);
        lastCounts.textContent = t('monitoring.checkInCounts', { n: next.CheckInCount, missed: next.MissedCheckInCount });
        tr.dataset.lastCheckIn = next.LastCheckInAt ?? '';
        tr.dataset.checkIns = String(next.CheckInCount);
        r.shown = '';
        r.tick(Date.now());
      },
      tick(now) {
        const state = stateAt(s, now);
        if (state !== r.shown) {
          r.shown = state;
          stateCell.replaceChildren(monitoringBadge(state));
          tr.dataset.state = state;
        }
        const c = countdown(s, now);
        if (clock.textContent !== c.text) clock.textContent = c.text;
        clock.dataset.phase = c.phase;
        clock.dataset.seconds = String(c.seconds);
        const ago = agoWords(s.LastCheckInAt, now);
        if (last.textContent !== ago) last.textContent = ago;
      },
    };
    r.update(first);

    // The person and the device's name, read once (the device list's records, else by id).
    void live.device(first.TenantCode, first.DeviceId).then((d) => {
      deviceName = d?.FriendlyName || first.DeviceId;
      deviceLink.textContent = deviceName;
      if (!personText) person.textContent = deviceName;
      return personOf(first);
    }).then((name) => {
      if (!name) return;
      personText = name;
      person.textContent = name;
      for (const b of tr.querySelectorAll<HTMLElement>('[data-group=actions]')) b.setAttribute('aria-label', t('monitoring.actionsFor', { who: name }));
    });

    /** The row's buttons and their forms (a form opens under its button). */
    function actions(): (Node | string)[] {
      if (!mayAct && !mayStop) return [t('alert.none')];
      const base = v2(first.TenantCode, 'devices', first.DeviceId, 'monitoring');
      const out: HTMLElement[] = [];
      const group = h('div', { class: 'monitoring-actions', role: 'group', 'data-group': 'actions', 'aria-label': t('monitoring.actionsFor', { who: first.DeviceId }) });
      out.push(group);
      const failedFor = (e: unknown): void => {
        // The problem display, and whose session it was about.
        result.fail(e);
        result.el.textContent =
          e instanceof NotFoundError
            ? t('monitoring.gone', { who: who() })
            : e instanceof ConflictError
              ? t('monitoring.changedMeanwhile', { who: who() })
              : t('monitoring.failedFor', { who: who(), detail: problemText(e) });
        void read();
      };
      const busy = (controls: HTMLButtonElement[], on: boolean): void => controls.forEach((b) => (b.disabled = on));

      if (mayAct) {
        // Check in on the person's behalf: asks for what they said.
        const noteId = `mon-${n}-note`;
        const formId = `mon-${n}-checkin`;
        const open = h('button', { type: 'button', 'aria-expanded': 'false', 'aria-controls': formId, 'data-action': 'check-in' }, t('monitoring.checkIn'));
        const text = h('input', { type: 'text', id: noteId, name: 'note', maxlength: 500, required: true, 'aria-describedby': `${noteId}-hint`, autocomplete: 'off' });
        const submit = h('button', { type: 'submit' }, t('monitoring.checkInSubmit'));
        const cancel = h('button', { type: 'button' }, t('monitoring.cancel'));
        const form = h(
          'form',
          { class: 'monitoring-form', id: formId, hidden: true, 'data-form': 'check-in' },
          h('label', { for: noteId }, t('monitoring.checkInNote')),
          text,
          h('span', { class: 'hint', id: `${noteId}-hint` }, t('monitoring.checkInHint')),
          h('span', { class: 'form-buttons' }, submit, cancel),
        );
        const toggle = (on: boolean): void => {
          form.hidden = !on;
          open.setAttribute('aria-expanded', String(on));
          if (on) text.focus();
        };
        open.addEventListener('click', () => toggle(form.hidden));
        cancel.addEventListener('click', () => {
          toggle(false);
          open.focus();
        });
        form.addEventListener('submit', (e) => {
          e.preventDefault();
          const said = text.value.trim();
          if (!said) return;
          busy([submit, cancel, open], true);
          result.clear();
          api
            .post<MonitoringSession>(`${base}/checkins`, { Note: said })
            .then((answer) => {
              answered(answer);
              text.value = '';
              toggle(false);
              open.focus();
              result.ok(t('monitoring.checkedIn', { who: who() }));
            })
            .catch(failedFor)
            .finally(() => busy([submit, cancel, open], false));
        });

        // Extend: a larger duration (counted from the start), by 30 or 60 minutes.
        const extenders = ([30, 60] as const).map((minutes) =>
          h('button', { type: 'button', 'data-action': `extend-${minutes}` }, t(minutes === 30 ? 'monitoring.extend30' : 'monitoring.extend60')),
        );
        extenders.forEach((button, i) => {
          const minutes = i === 0 ? 30 : 60;
          button.addEventListener('click', () => {
            busy(extenders, true);
            result.clear();
            const duration = extendedDuration(s, minutes, Date.now());
            api
              .patch<MonitoringSession>(base, [{ op: 'replace', path: '/DurationMinutes', value: duration }], { headers: { 'If-Match': s.ETag } })
              .then((answer) => {
                answered(answer);
                result.ok(t('monitoring.extended', { who: who(), end: formatDateTime((answer ?? s).PlannedEndAt) }));
              })
              .catch(failedFor)
              .finally(() => busy(extenders, false));
          });
        });
        group.append(open, ...extenders);
        out.push(form);
      }

      if (mayStop) {
        // Force stop: an operator's ForceStopMonitoring, with the reason typed.
        const reasonId = `mon-${n}-reason`;
        const formId = `mon-${n}-stop`;
        const open = h('button', { type: 'button', 'aria-expanded': 'false', 'aria-controls': formId, 'data-action': 'force-stop' }, t('monitoring.forceStop'));
        const reason = h('input', { type: 'text', id: reasonId, name: 'reason', maxlength: 500, required: true, autocomplete: 'off' });
        const submit = h('button', { type: 'submit', class: 'danger' }, t('monitoring.forceStopSubmit'));
        const cancel = h('button', { type: 'button' }, t('monitoring.cancel'));
        const form = h(
          'form',
          { class: 'monitoring-form', id: formId, hidden: true, 'data-form': 'force-stop' },
          h('label', { for: reasonId }, t('monitoring.forceStopReason')),
          reason,
          h('span', { class: 'form-buttons' }, submit, cancel),
        );
        const toggle = (on: boolean): void => {
          form.hidden = !on;
          open.setAttribute('aria-expanded', String(on));
          if (on) reason.focus();
        };
        open.addEventListener('click', () => toggle(form.hidden));
        cancel.addEventListener('click', () => {
          toggle(false);
          open.focus();
        });
        form.addEventListener('submit', (e) => {
          e.preventDefault();
          const why = reason.value.trim();
          if (!why) return;
          busy([submit, cancel, open], true);
          result.clear();
          const body: MonitoringForceStop = { Reason: why };
          api
            .post<unknown>(`${base}/forcestop`, body)
            .then(() => {
              const name = who();
              board.remove(sessionKey(first), first.MonitoringSessionId);
              sync();
              result.ok(t('monitoring.stopped', { who: name }));
              // The row (and the focus in it) went: the result takes the focus.
              result.el.focus();
            })
            .catch(failedFor)
            .finally(() => busy([submit, cancel, open], false));
        });
        group.append(open);
        out.push(form);
      }
      return out;
    }
    return r;
  }

  function cell(c: Column, ...content: (Node | string)[]): HTMLTableCellElement {
    return h('td', { 'data-label': label(c), 'data-col': c }, ...content);
  }

  void read();
  const poll = window.setInterval(() => void read(), POLL_MS);
  // Every second: the countdowns and ages, from the records held (no read); the order and
  // the counts again when a state turned.
  const ticker = window.setInterval(() => {
    const now = Date.now();
    let turned = false;
    for (const r of rows.values()) {
      const before = r.shown;
      r.tick(now);
      if (r.shown !== before) turned = true;
    }
    if (turned) {
      order();
      drawCounts();
    }
  }, 1000);
  const offs = [
    // A line of a session's history, with the session as it then was: the row from it.
    live.monitoringEvent.on((e) => {
      const mine = inScope(e.Session.TenantCode);
      if (mine === null) readSoon();
      else if (mine && board.event(e)) sync();
    }),
    live.resync.on(() => void read()),
  ];
  return () => {
    closed = true;
    offs.forEach((off) => off());
    window.clearInterval(poll);
    window.clearInterval(ticker);
    if (soon) window.clearTimeout(soon);
  };
}
