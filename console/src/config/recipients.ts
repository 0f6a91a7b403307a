// Recipients of notifications and distribution lists: the types the API knows (read
// from its OpenAPI document, so a type added there appears here), what each needs, and
// a recipient's one-line description.
import { api } from '../api';

export interface Recipient {
  Type?: string | null;
  TenantCode?: string | null;
  ContactId?: string | null;
  ContactDetailId?: string | null;
  ListId?: string | null;
  MessagingAddress?: string | null;
  Radius?: string | null;
  ReportingFrequency?: string | null;
  Interval?: string | null;
  GroupId?: string | null;
}

export interface ContactEntry {
  EntryId?: string | null;
  Address?: string | null;
  LastUpdated?: string | null;
}

export interface Contact {
  ContactId?: string | null;
  ContactName?: string | null;
  IsEscalationContact?: boolean;
  AppliesToSubtenants?: boolean;
  SyncToDevices?: boolean | null;
  CultureName?: string | null;
  ContactEntries?: ContactEntry[] | null;
}

export interface DistributionList {
  ListId?: string | null;
  ListName?: string | null;
  AppliesToSubtenants?: boolean;
  LastUpdated?: string | null;
  Recipients?: Recipient[] | null;
  SyncToDevices?: boolean;
}

/** The one value a recipient of a type carries besides its type, if any. */
export type RecipientValue = 'contact' | 'list' | 'address' | 'radius' | 'frequency' | 'interval' | 'group' | 'none';

export function recipientValue(type: string): RecipientValue {
  switch (type) {
    case 'TenantContact':
    case 'DeviceContact':
      return 'contact';
    case 'TenantList':
    case 'DeviceList':
      return 'list';
    case 'MessagingAddress':
      return 'address';
    case 'NearestDevices':
      return 'radius';
    case 'ChangeReportingFrequency':
      return 'frequency';
    case 'SendCheckInRequest':
      return 'interval';
    case 'ChangeGroup':
      return 'group';
    default:
      return 'none';
  }
}

/** The recipient the editor's choices make (only the fields its type allows). */
export function makeRecipient(type: string, value: string, detail = ''): Recipient {
  const v = value.trim();
  switch (recipientValue(type)) {
    case 'contact':
      return detail ? { Type: type, ContactId: v, ContactDetailId: detail } : { Type: type, ContactId: v };
    case 'list':
      return { Type: type, ListId: v };
    case 'address':
      return { Type: type, MessagingAddress: v };
    case 'radius':
      return { Type: type, Radius: v };
    case 'frequency':
      return { Type: type, ReportingFrequency: v };
    case 'interval':
      return { Type: type, Interval: v };
    case 'group':
      return { Type: type, GroupId: v };
    case 'none':
      return { Type: type };
  }
}

/** What identifies the recipient beyond its type, names looked up where known. */
export function recipientDetail(
  r: Recipient,
  contacts: ReadonlyMap<string, Contact>,
  lists: ReadonlyMap<string, DistributionList>,
): string {
  const type = r.Type ?? '';
  switch (recipientValue(type)) {
    case 'contact': {
      const c = contacts.get(r.ContactId ?? '');
      const name = c?.ContactName ?? `#${r.ContactId ?? ''}`;
      const entry = r.ContactDetailId
        ? c?.ContactEntries?.find((e) => e.EntryId === r.ContactDetailId)?.Address ?? `#${r.ContactDetailId}`
        : '';
      return entry ? `${name} (${entry})` : name;
    }
    case 'list':
      return lists.get(r.ListId ?? '')?.ListName ?? `#${r.ListId ?? ''}`;
    case 'address':
      return r.MessagingAddress ?? '';
    case 'radius':
      return r.Radius ?? '';
    case 'frequency':
      return r.ReportingFrequency ?? '';
    case 'interval':
      return r.Interval ?? '';
    case 'group':
      return r.GroupId ?? '';
    case 'none':
      return '';
  }
}

/** The `RecipientType` enum of an OpenAPI document. */
export function recipientTypesIn(doc: unknown): string[] {
  const schema = (doc as { components?: { schemas?: Record<string, { enum?: unknown[] }> } })?.components?.schemas
    ?.RecipientType;
  return Array.isArray(schema?.enum) ? schema.enum.filter((x): x is string => typeof x === 'string') : [];
}

let known: Promise<string[]> | null = null;

/** The recipient types the API knows (its OpenAPI document, read once). */
export function recipientTypes(): Promise<string[]> {
  known ??= api
    .get<unknown>('/openapi.json')
    .then(recipientTypesIn)
    .then((types) => (types.length ? types : Promise.reject(new Error('no RecipientType'))))
    .catch(() => {
      known = null;
      // The address book's own types still work without the document.
      return ['TenantContact', 'TenantList', 'MessagingAddress'];
    });
  return known;
}
