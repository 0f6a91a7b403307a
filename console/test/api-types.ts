// Type checks, no runtime test: `tsc --noEmit` (npm test's first step) reads this file.
// The record types the console's modules declare for what they read (where they do not use
// api.ts's aliases of the document's schemas directly) must name only fields the API's
// OpenAPI document has (src/api-schema.d.ts, generated from `safetrack openapi`), each
// able to hold what the document says the server sends. A field the document lacks, or a
// type that does not fit, fails the check with the field's name in the message.
import type { Schemas } from '../src/api';
import type { Alert } from '../src/alerts';
import type { Geofence as ConfigGeofence } from '../src/config/geometry';
import type { Contact, ContactEntry, DistributionList, Recipient } from '../src/config/recipients';
import type { DeviceRecord } from '../src/devices';
import type { Geofence as MapGeofence } from '../src/map';
import type { Delivery } from '../src/pages/admin/deliveries';
import type { EventNotification } from '../src/pages/config/notifications';
import type { MtMessage } from '../src/pages/device-commands';
import type { MoMessage } from '../src/positions';
import type { TenantRecord } from '../src/preferences';
import type { MessageWithPosition } from '../src/replay';

/** For each field of `Local`: true, or why it does not follow the document's `Doc`. */
type Verdicts<Local, Doc> = {
  [K in keyof Local]-?: K extends keyof Doc
    ? [NonNullable<Doc[K]>] extends [NonNullable<Local[K]>]
      ? true
      : `${K & string}: the document's type does not fit`
    : `${K & string}: not in the document`;
};
/** true, or the union of what is wrong (with true). */
type Follows<Local, Doc> = Verdicts<Local, Doc>[keyof Local] extends true ? true : Verdicts<Local, Doc>[keyof Local];
type Assert<T extends true> = T;

export type RecordTypesFollowTheDocument = [
  Assert<Follows<Alert, Schemas['Alert']>>,
  Assert<Follows<DeviceRecord, Schemas['Device']>>,
  Assert<Follows<MoMessage, Schemas['MoMessage']>>,
  Assert<Follows<MessageWithPosition, Schemas['MoMessage']>>,
  Assert<Follows<MtMessage, Schemas['MtMessage']>>,
  Assert<Follows<ConfigGeofence, Schemas['Geofence']>>,
  Assert<Follows<MapGeofence, Schemas['Geofence']>>,
  Assert<Follows<Recipient, Schemas['Recipient']>>,
  Assert<Follows<Contact, Schemas['Contact']>>,
  Assert<Follows<ContactEntry, Schemas['ContactEntry']>>,
  Assert<Follows<DistributionList, Schemas['DistributionList']>>,
  Assert<Follows<Delivery, Schemas['Delivery']>>,
  Assert<Follows<EventNotification, Schemas['EventNotification']>>,
  Assert<Follows<TenantRecord, Schemas['Tenant']>>,
];
