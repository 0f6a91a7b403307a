import { describe, expect, it } from 'vitest';
import {
  formatPositions,
  formatRings,
  geofenceShape,
  openRing,
  parsePositions,
  parseRings,
  shapeFields,
  wrapLon,
} from '../src/config/geometry';
import { expressionPosition, fieldMessages, markPosition, placeMessages } from '../src/config/problems';
import { makeRecipient, recipientDetail, recipientTypesIn, recipientValue } from '../src/config/recipients';
import { mayConfigure } from '../src/config/access';

describe('geofence shapes and the API geometry', () => {
  it('a circle becomes CircleCentre and a whole-metre CircleRadius, the other shapes null', () => {
    const fields = shapeFields({ kind: 'circle', centre: { Lat: 51.50000012, Lon: -0.1234567891 }, radius: 249.6 });
    expect(fields).toEqual({
      GeofenceType: 'circle',
      CircleCentre: { Lat: 51.5, Lon: -0.123457 },
      CircleRadius: 250,
      PolygonPositions: null,
      PolylinePositions: null,
    });
    expect(geofenceShape({ ...fields, Name: 'Depot' })).toEqual({
      kind: 'circle',
      centre: { Lat: 51.5, Lon: -0.123457 },
      radius: 250,
    });
  });

  it('a polygon read back closed is drawn open, and saved open', () => {
    const closed = [
      { Lat: 0, Lon: 0 },
      { Lat: 0, Lon: 1 },
      { Lat: 1, Lon: 1 },
      { Lat: 0, Lon: 0 },
    ];
    const shape = geofenceShape({ GeofenceType: 'Polygon', PolygonPositions: [closed] });
    expect(shape).toEqual({ kind: 'polygon', rings: [closed.slice(0, 3)] });
    expect(shapeFields(shape!).PolygonPositions).toEqual([closed.slice(0, 3)]);
    expect(openRing([{ Lat: 1, Lon: 1 }])).toEqual([{ Lat: 1, Lon: 1 }]);
  });

  it('a polyline keeps its points in order; longitudes from a wrapped map come back in range', () => {
    const fields = shapeFields({ kind: 'polyline', points: [{ Lat: 10, Lon: 190 }, { Lat: 11, Lon: -370 }] });
    expect(fields.GeofenceType).toBe('polyline');
    expect(fields.PolylinePositions).toEqual([{ Lat: 10, Lon: -170 }, { Lat: 11, Lon: -10 }]);
    expect(fields.CircleCentre).toBeNull();
    expect(wrapLon(180)).toBe(180);
    expect(wrapLon(-180)).toBe(-180);
    expect(wrapLon(540)).toBe(180);
    expect(wrapLon(359.5)).toBe(-0.5);
  });

  it('records without a usable shape give none', () => {
    expect(geofenceShape({ GeofenceType: 'circle', CircleCentre: { Lat: 1, Lon: 1 } })).toBeNull();
    expect(geofenceShape({ GeofenceType: 'polygon', PolygonPositions: [] })).toBeNull();
    expect(geofenceShape({ GeofenceType: 'square' })).toBeNull();
  });

  it('positions are typed one "lat, lon" a line; rings split on an empty line', () => {
    expect(parsePositions('51.5, -0.1\n\n 51.6 -0.2 \n')).toEqual({
      points: [{ Lat: 51.5, Lon: -0.1 }, { Lat: 51.6, Lon: -0.2 }],
    });
    expect(parsePositions('51.5, -0.1\nnorth, 3')).toEqual({ badLine: 2 });
    expect(parsePositions('1, 2, 3')).toEqual({ badLine: 1 });
    const rings = [[{ Lat: 0, Lon: 0 }, { Lat: 0, Lon: 2 }, { Lat: 2, Lon: 2 }], [{ Lat: 0.5, Lon: 0.5 }, { Lat: 0.5, Lon: 1 }, { Lat: 1, Lon: 1 }]];
    expect(parseRings(formatRings(rings))).toEqual({ rings });
    expect(parseRings('0,0\n0,1\n\nx')).toEqual({ badLine: 4 });
    expect(formatPositions([{ Lat: 1.5, Lon: -2 }])).toBe('1.5, -2');
  });
});

describe('where a 400 is shown', () => {
  const problem = {
    status: 400,
    errors: [
      { field: 'Name', message: 'is required' },
      { field: 'Recipients[1].ContactId', message: 'no contact 9 in this tenant' },
      { field: 'Recipients', message: 'at most 1000 recipients' },
      { field: 'ContactEntries[0].Address', message: 'not an address' },
      { field: 'Mystery', message: 'odd' },
    ],
  };

  it('reads errors[]', () => {
    expect(fieldMessages(problem)).toHaveLength(5);
    expect(fieldMessages({ status: 400 })).toEqual([]);
    expect(fieldMessages(undefined)).toEqual([]);
  });

  it('puts each message beside the most specific control, the rest in the summary', () => {
    const { placed, unplaced } = placeMessages(fieldMessages(problem), ['Name', 'Recipients', 'Recipients[1]', 'ContactEntries[0]', 'Recip']);
    expect(placed.get('Name')).toEqual(['is required']);
    expect(placed.get('Recipients[1]')).toEqual(['ContactId: no contact 9 in this tenant']);
    expect(placed.get('Recipients')).toEqual(['at most 1000 recipients']);
    expect(placed.get('ContactEntries[0]')).toEqual(['Address: not an address']);
    expect(placed.has('Recip')).toBe(false);
    expect(unplaced).toEqual([{ field: 'Mystery', message: 'odd' }]);
  });

  it('finds the position an expression message names and marks that character', () => {
    expect(expressionPosition('position 14: expected an event name, found end of expression')).toBe(14);
    expect(expressionPosition('is required')).toBeNull();
    expect(markPosition('Sped > 100', 1)).toEqual(['', 'S', 'ped > 100']);
    expect(markPosition('Emergency AND', 14)).toEqual(['Emergency AND', '', '']);
    expect(markPosition('Speed > fast', 9)).toEqual(['Speed > ', 'f', 'ast']);
  });
});

describe('recipients', () => {
  it('each type carries only its own field', () => {
    expect(makeRecipient('TenantContact', ' 7 ')).toEqual({ Type: 'TenantContact', ContactId: '7' });
    expect(makeRecipient('TenantContact', '7', '2')).toEqual({ Type: 'TenantContact', ContactId: '7', ContactDetailId: '2' });
    expect(makeRecipient('TenantList', '3')).toEqual({ Type: 'TenantList', ListId: '3' });
    expect(makeRecipient('MessagingAddress', 'mail:a@b.c')).toEqual({ Type: 'MessagingAddress', MessagingAddress: 'mail:a@b.c' });
    expect(makeRecipient('NearestDevices', '5')).toEqual({ Type: 'NearestDevices', Radius: '5' });
    expect(makeRecipient('DeviceUserSms', 'ignored')).toEqual({ Type: 'DeviceUserSms' });
    expect(recipientValue('ChangeGroup')).toBe('group');
  });

  it('is described with the names the address book gives', () => {
    const contacts = new Map([['7', { ContactId: '7', ContactName: 'Duty officer', ContactEntries: [{ EntryId: '2', Address: '+447700900123' }] }]]);
    const lists = new Map([['3', { ListId: '3', ListName: 'Night shift' }]]);
    expect(recipientDetail({ Type: 'TenantContact', ContactId: '7' }, contacts, lists)).toBe('Duty officer');
    expect(recipientDetail({ Type: 'TenantContact', ContactId: '7', ContactDetailId: '2' }, contacts, lists)).toBe('Duty officer (+447700900123)');
    expect(recipientDetail({ Type: 'TenantList', ListId: '3' }, contacts, lists)).toBe('Night shift');
    expect(recipientDetail({ Type: 'TenantList', ListId: '4' }, contacts, lists)).toBe('#4');
  });

  it('the types come from the OpenAPI document', () => {
    expect(recipientTypesIn({ components: { schemas: { RecipientType: { enum: ['TenantContact', 'DeviceCall'] } } } })).toEqual(['TenantContact', 'DeviceCall']);
    expect(recipientTypesIn({})).toEqual([]);
  });
});

describe('role', () => {
  it('only ManageConfiguration may change configuration', () => {
    expect(mayConfigure(['Read', 'ManageConfiguration'])).toBe(true);
    expect(mayConfigure(['Read', 'HandleAlerts'])).toBe(false);
    expect(mayConfigure(undefined)).toBe(false);
  });
});
