// Where a 400's messages go: each `errors[]` entry (`field`, `message`) beside the form
// control that holds that field, else in the form's summary. Pure, so it is unit-tested.
import type { Problem, ProblemField } from '../api';

/** One `errors[]` entry: the field (`Recipients[2].ContactId`) and its message. */
export type FieldMessage = ProblemField;

/** The problem's `errors[]`. */
export function fieldMessages(problem: Problem | undefined): FieldMessage[] {
  return problem?.errors ?? [];
}

/**
 * Sorts messages by the control that shows them: a field goes to the longest of `slots`
 * that is the field itself or a whole-segment prefix of it (`Recipients[2].ContactId` →
 * `Recipients[2]` → `Recipients`). Fields no slot takes are `unplaced` (the summary).
 */
export function placeMessages(
  messages: FieldMessage[],
  slots: Iterable<string>,
): { placed: Map<string, string[]>; unplaced: FieldMessage[] } {
  const names = [...slots].sort((a, b) => b.length - a.length);
  const placed = new Map<string, string[]>();
  const unplaced: FieldMessage[] = [];
  for (const m of messages) {
    const slot = names.find(
      (n) => m.field === n || (m.field.startsWith(n) && (m.field[n.length] === '.' || m.field[n.length] === '[')),
    );
    if (slot === undefined) {
      unplaced.push(m);
      continue;
    }
    const list = placed.get(slot) ?? [];
    list.push(m.field === slot ? m.message : `${m.field.slice(slot.length).replace(/^\./, '')}: ${m.message}`);
    placed.set(slot, list);
  }
  return { placed, unplaced };
}

/** The 1-based character position an `EventsExpression` message names (`position 14: …`). */
export function expressionPosition(message: string): number | null {
  const m = /^position (\d+):/.exec(message);
  return m ? Number(m[1]) : null;
}

/** The expression split around the character at `position` (1-based; past the end: ''). */
export function markPosition(expression: string, position: number): [string, string, string] {
  const chars = [...expression];
  const i = Math.max(0, Math.min(position - 1, chars.length));
  return [chars.slice(0, i).join(''), chars[i] ?? '', chars.slice(i + 1).join('')];
}
