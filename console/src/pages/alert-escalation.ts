// The alert page's escalation policy (issue 45 §3): the current step's Instructions —
// the response procedure the operator follows now — shown first and large, which step of
// how many, and when the next one fires (or that the chain is done or stopped). Hidden
// for an alert that follows no policy (today's rounds show as "Escalated n" in the
// summary). Redrawn from each alert record the page receives (read or streamed).
import { h } from '../dom';
import { t } from '../i18n';
import { formatDateTime } from '../format';
import type { Schemas } from '../api';

/** What the box reads of an alert record (the document's fields). */
export type EscalatedAlert = Pick<Schemas['Alert'], 'Status' | 'Escalation'>;

export interface EscalationBox {
  element: HTMLElement;
  show(alert: EscalatedAlert): void;
}

/** Minutes from `now` until `iso`, in words ("in 3 min", "due now"). */
export function untilWords(iso: string, now: number): string {
  const minutes = Math.ceil((Date.parse(iso) - now) / 60_000);
  return minutes > 0 ? t('escalation.inMinutes', { n: minutes }) : t('escalation.now');
}

/** What the box says about `a`'s escalation: null when it follows no policy. */
export function escalationLines(a: EscalatedAlert, now: number): { title: string; instructions: string | null; next: string } | null {
  const e = a.Escalation;
  if (!e) return null;
  const name = e.PolicyName ?? '';
  const count = e.StepCount ?? 0;
  const step = e.CurrentStep;
  const title = step
    ? t('escalation.policy', { name, n: step.Number ?? 0, count })
    : t('escalation.notYet', { name, count });
  const instructions = step ? (step.Instructions?.trim() ? step.Instructions : t('escalation.noInstructions')) : null;
  let next: string;
  if (e.NextStepAt) {
    const words = { at: formatDateTime(e.NextStepAt), in: untilWords(e.NextStepAt, now) };
    next = step ? t('escalation.next', words) : t('escalation.nextFirst', words);
  } else if (a.Status && a.Status !== 'Open') {
    next = t('escalation.stopped', { status: t(`status.${a.Status}` as 'status.Open').toLowerCase() });
  } else if (e.PolicyId == null) {
    next = t('escalation.deleted');
  } else {
    next = t('escalation.last');
  }
  return { title, instructions, next };
}

export function escalationBox(): EscalationBox {
  const title = h('p', { class: 'escalation-step', 'data-testid': 'escalation-step' });
  const instructions = h('p', { class: 'escalation-instructions', 'data-testid': 'escalation-instructions' });
  const next = h('p', { class: 'escalation-next', 'data-testid': 'escalation-next' });
  const element = h(
    'section',
    { class: 'escalation', 'aria-labelledby': 'escalation-h', 'data-testid': 'escalation', hidden: true },
    h('h2', { id: 'escalation-h' }, t('escalation.heading')),
    title,
    instructions,
    next,
  );
  const show = (a: EscalatedAlert): void => {
    const lines = escalationLines(a, Date.now());
    element.hidden = lines === null;
    if (!lines) return;
    title.textContent = lines.title;
    // Text only: the instructions are a tenant's free text.
    instructions.textContent = lines.instructions ?? '';
    instructions.hidden = lines.instructions === null;
    next.textContent = lines.next;
  };
  return { element, show };
}
