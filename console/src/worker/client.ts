// What the worker app sends, and how: every action is an MO message of the worker's
// device (`POST …/devices/{id}/momessages?process=true`, deduplicated by SequenceNumber
// and SentFromDevice, so a resend is safe), except an extension (a JSON Patch of the
// session's absolute `DurationMinutes`, the same whether sent once or twice). DESIGN §11:
// `CheckIn` is the message that confirms a check-in; `BeginMonitoring` with the session's
// settings in `Properties` starts one, `EndMonitoring` ends it; an `EmergencyState` of
// `Active` is the SOS, `None` after it fires `EmergencyCancelled`.
import { api, ApiError, NetworkError, v2 } from '../api';
import { nextSequence, type Action, type OutgoingMessage, type Outcome, type Queued } from './outbox';

const SEQUENCE_KEY = 'safetrack.worker.sequence';

/** The next SequenceNumber of the device, kept in the browser across reloads. */
export function takeSequence(tenant: string, deviceId: string, now = Date.now()): number {
  const key = `${SEQUENCE_KEY}.${tenant}/${deviceId}`;
  let last: number | null = null;
  try {
    const held = Number(localStorage.getItem(key));
    last = Number.isFinite(held) && held > 0 ? held : null;
  } catch {
    // Storage refused: the clock alone keeps them increasing.
  }
  const next = nextSequence(last, now);
  try {
    localStorage.setItem(key, String(next));
  } catch {
    // As above.
  }
  return next;
}

export interface Target {
  tenant: string;
  deviceId: string;
}

type MessageKind = Exclude<Action['kind'], 'extend'>;

/** An action that is one MO message, stamped now. */
export function messageAction(
  target: Target,
  kind: MessageKind,
  fields: Omit<OutgoingMessage, 'SequenceNumber' | 'SentFromDevice'>,
  now = new Date(),
): Action {
  const message: OutgoingMessage = {
    ...fields,
    SequenceNumber: takeSequence(target.tenant, target.deviceId, now.getTime()),
    SentFromDevice: now.toISOString(),
  };
  if (!message.Position) delete message.Position;
  return { kind, tenant: target.tenant, deviceId: target.deviceId, takenAt: now.toISOString(), message };
}

export function sos(target: Target, position: OutgoingMessage['Position']): Action {
  return messageAction(target, 'sos', {
    MessageType: 'ManualPositionReport',
    EmergencyState: 'Active',
    Message: 'SOS',
    Position: position,
    Properties: { Source: 'WorkerApp' },
  });
}

export function safe(target: Target, position: OutgoingMessage['Position']): Action {
  return messageAction(target, 'safe', {
    MessageType: 'ManualPositionReport',
    EmergencyState: 'None',
    Message: 'I am safe',
    Position: position,
    Properties: { Source: 'WorkerApp' },
  });
}

export function checkIn(target: Target, position: OutgoingMessage['Position']): Action {
  return messageAction(target, 'checkIn', {
    MessageType: 'CheckIn',
    Position: position,
    Properties: { Source: 'WorkerApp' },
  });
}

export interface Plan {
  durationMinutes: number;
  intervalMinutes: number;
  note: string;
}

export function begin(target: Target, plan: Plan, position: OutgoingMessage['Position']): Action {
  const properties: Record<string, string> = {
    Source: 'WorkerApp',
    DurationMinutes: String(plan.durationMinutes),
    CheckInIntervalMinutes: String(plan.intervalMinutes),
  };
  const note = plan.note.trim();
  if (note) properties['Note'] = note;
  return messageAction(target, 'start', {
    MessageType: 'BeginMonitoring',
    Position: position,
    Properties: properties,
    ...(note ? { Message: note } : {}),
  });
}

export function end(target: Target, position: OutgoingMessage['Position']): Action {
  return messageAction(target, 'end', { MessageType: 'EndMonitoring', Position: position, Properties: { Source: 'WorkerApp' } });
}

export function acknowledge(target: Target, mtMessageId: string): Action {
  return messageAction(target, 'acknowledge', {
    MessageType: 'MessageAcknowledgement',
    Properties: { Source: 'WorkerApp', MtMessageId: mtMessageId },
  });
}

export function extend(target: Target, durationMinutes: number): Action {
  return { kind: 'extend', tenant: target.tenant, deviceId: target.deviceId, takenAt: new Date().toISOString(), durationMinutes };
}

/** Whether an answer means "try again later" rather than "never". */
function transient(e: unknown): boolean {
  if (e instanceof NetworkError) return true;
  if (!(e instanceof ApiError)) return true;
  return e.status === 401 || e.status === 408 || e.status === 429 || e.status >= 500;
}

/** Sends one waiting action (the outbox's `send`). */
export async function send(action: Queued): Promise<Outcome> {
  try {
    if (action.kind === 'extend') {
      await api.patch(v2(action.tenant, 'devices', action.deviceId, 'monitoring'), [
        { op: 'replace', path: '/DurationMinutes', value: action.durationMinutes },
      ]);
    } else {
      await api.post(`${v2(action.tenant, 'devices', action.deviceId, 'momessages')}?process=true`, [action.message]);
    }
    return { sent: true };
  } catch (e) {
    if (transient(e)) return { later: true };
    return { refused: e instanceof Error ? e.message : String(e) };
  }
}
