import { describe, expect, it } from 'vitest';
import {
  REPORTS, csvFilename, defaultParams, defaultWindow, extras, missing, reportPath, reportQuery, shownColumns, shownScore, splitList, windowBound,
} from '../src/reports';
import { userMatches } from '../src/pages/admin/users';
import { fieldWords, plainAddress } from '../src/pages/admin/common';
import { assignableRoles, callerRole, mayManageUser, offered } from '../src/roles';
import { tenantOptions, uiLanguage, workingChoice, zonedInstant } from '../src/preferences';
import { deliveriesQuery } from '../src/pages/admin/deliveries';
import type { Session } from '../src/api';

const query = (q: string): Array<[string, string]> => [...new URLSearchParams(q).entries()];

describe('report parameters', () => {
  it('every one of the eight reports has its extras', () => {
    expect(REPORTS).toHaveLength(8);
    expect(extras('DevicesOverviewReport')).toEqual(['LastTimeHoursFilter']);
    expect(extras('AlertsReport')).toEqual([]);
    expect(extras('DriverBehaviourReport')).toEqual(['GroupBy', 'DrivingViolationTypes']);
    expect(extras('DriverBehaviourViolationReport')).toEqual(['DrivingViolationTypes']);
    expect(extras('MonitoringReport')).toEqual([]);
  });

  it('an interval type wins over dates; arrays repeat; blanks are left out', () => {
    const p = { ...defaultParams(), intervalType: 'last-month', dateFrom: '2026-03-01', groupIds: ['7', ' ', '9'], deviceIds: ['a b'] };
    expect(query(reportQuery('AlertsReport', p))).toEqual([
      ['IntervalType', 'last-month'], ['GroupIds', '7'], ['GroupIds', '9'], ['DeviceIds', 'a b'],
    ]);
  });

  it('custom dates, subtenants, status and users', () => {
    const p = { ...defaultParams(), intervalType: '', dateFrom: '2026-03-01', dateTo: '2026-03-31', subtenants: true, deviceStatus: 'Active', userIds: ['3'] };
    expect(query(reportQuery('AssetUtilisationReport', p))).toEqual([
      ['DateFrom', '2026-03-01'], ['DateTo', '2026-03-31'], ['Subtenants', 'true'], ['DeviceStatus', 'Active'], ['UserIds', '3'],
    ]);
  });

  it('extras go only to the reports that read them', () => {
    const p = { ...defaultParams(), lastTimeHoursFilter: '-24', groupBy: 'Vehicle', violationTypes: ['Speeding', 'Braking'] };
    expect(query(reportQuery('DevicesOverviewReport', p))).toContainEqual(['LastTimeHoursFilter', '-24']);
    expect(reportQuery('DevicesOverviewReport', p)).not.toContain('GroupBy');
    const summary = query(reportQuery('DriverPerformanceSummaryReport', p));
    expect(summary).toContainEqual(['GroupBy', 'Vehicle']);
    expect(summary.filter(([k]) => k === 'DrivingViolationTypes').map(([, v]) => v)).toEqual(['Speeding', 'Braking']);
    expect(reportQuery('DriverPerformanceDetailedReport', p)).not.toContain('GroupBy');
    expect(reportQuery('AlertsReport', p)).toBe('IntervalType=last-7-days');
  });

  it('the path escapes the tenant; the window must be complete', () => {
    expect(reportPath('10/00', 'AlertsReport', defaultParams())).toBe('/V2/10%2F00/reports/AlertsReport?IntervalType=last-7-days');
    expect(missing(defaultParams())).toEqual([]);
    expect(missing({ ...defaultParams(), intervalType: '', dateTo: '2026-03-01' })).toEqual(['DateFrom']);
    expect(missing({ ...defaultParams(), intervalType: '' })).toEqual(['DateFrom', 'DateTo']);
    expect(splitList('a, b,\n c,,')).toEqual(['a', 'b', 'c']);
  });
});

describe('CSV file name', () => {
  it('names the report, the tenant and the window', () => {
    expect(csvFilename('AlertsReport', '1000', defaultParams())).toBe('AlertsReport-1000-last-7-days.csv');
    expect(csvFilename('AlertsReport', '1000', { ...defaultParams(), intervalType: '', dateFrom: '2026-03-01', dateTo: '2026-03-31' }))
      .toBe('AlertsReport-1000-2026-03-01_2026-03-31.csv');
  });

  it('is safe on every disk', () => {
    const name = csvFilename('DevicesOverviewReport', '../10 00', { ...defaultParams(), intervalType: '', dateFrom: '2026-03-01T10:00:00+01:00', dateTo: '' });
    expect(name).toBe('DevicesOverviewReport-10-00-2026-03-01T10-00-00-01-00.csv');
    expect(name).not.toMatch(/[/\\:]/);
  });
});

describe('role rules', () => {
  const as = (role: string, permissions: string[]): Session => ({ Username: role, TenantCode: '1000', UserRoleId: role, Permissions: permissions });
  const admin = as('Administrator', ['ManageTenants', 'ManageUsers', 'ManageConfiguration', 'Read']);
  const manager = as('Manager', ['ManageUsers', 'ManageConfiguration', 'Read']);
  const reader = as('ReadOnly', ['Read']);

  it('nobody is offered a role above their own', () => {
    expect(assignableRoles(admin)).toEqual(['Administrator', 'Manager', 'User', 'ReadOnly']);
    expect(assignableRoles(manager)).toEqual(['Manager', 'User', 'ReadOnly']);
    expect(assignableRoles(reader)).toEqual([]);
  });

  it('nor manages a user above them', () => {
    expect(mayManageUser(manager, 'Administrator')).toBe(false);
    expect(mayManageUser(manager, 'Manager')).toBe(true);
    expect(mayManageUser(admin, 'Administrator')).toBe(true);
    expect(mayManageUser(reader, 'ReadOnly')).toBe(false);
  });

  it('entries are offered by permission; a token ranks by its permissions', () => {
    const entries = [{ path: '/a', needs: 'Read' as const }, { path: '/w', needs: 'ManageConfiguration' as const }];
    expect(offered(entries, reader).map((e) => e.path)).toEqual(['/a']);
    expect(offered(entries, manager).map((e) => e.path)).toEqual(['/a', '/w']);
    expect(offered(entries, null)).toEqual([]);
    expect(callerRole({ Permissions: ['ManageUsers', 'Read'] })).toBe('Manager');
    expect(callerRole({ Permissions: ['Read'] })).toBe('ReadOnly');
  });
});

describe('language choice', () => {
  it('profile, else tenant, else browser, else English', () => {
    expect(uiLanguage('fr-FR', 'en', ['en-GB'])).toBe('fr');
    expect(uiLanguage(null, 'fr', ['en-GB'])).toBe('fr');
    expect(uiLanguage('de', 'fr', ['en-GB'])).toBe('fr');
    expect(uiLanguage(undefined, '', ['de-DE', 'fr-CA'])).toBe('fr');
    expect(uiLanguage(null, null, ['de'])).toBe('en');
  });
});

describe('working tenant', () => {
  const own = { TenantCode: '1000', Description: 'Root' };
  const below = [
    { TenantCode: '1003', Description: 'B', ParentTenantCode: '1000' },
    { TenantCode: '1002', Description: 'A1', ParentTenantCode: '1001' },
    { TenantCode: '1001', Description: 'A', ParentTenantCode: '1000' },
    { TenantCode: '1009', Description: 'Lost', ParentTenantCode: '4444' },
  ];

  it('lists the subtree, each under its parent', () => {
    expect(tenantOptions(own, below).map((o) => [o.code, o.depth])).toEqual([
      ['1000', 0], ['1001', 1], ['1002', 2], ['1003', 1], ['1009', 1],
    ]);
    expect(tenantOptions(own, [])[0]?.label).toBe('Root (1000)');
  });

  it('keeps a stored choice only inside the subtree', () => {
    const options = tenantOptions(own, below);
    expect(workingChoice('1002', options, '1000')).toBe('1002');
    expect(workingChoice('2000', options, '1000')).toBe('1000');
    expect(workingChoice(null, options, '1000')).toBe('1000');
  });
});

describe('times typed in the profile zone', () => {
  it('reads a wall-clock time in the zone, across daylight saving', () => {
    expect(zonedInstant('2026-01-15T10:00', 'Europe/Paris')).toBe('2026-01-15T09:00:00.000Z');
    expect(zonedInstant('2026-07-15T10:00', 'Europe/Paris')).toBe('2026-07-15T08:00:00.000Z');
    expect(zonedInstant('2026-03-29T03:30', 'Europe/London')).toBe('2026-03-29T02:30:00.000Z');
    expect(zonedInstant('2026-07-15T10:00', 'America/New_York')).toBe('2026-07-15T14:00:00.000Z');
  });

  it('empty or unreadable is null', () => {
    expect(zonedInstant('', 'Europe/Paris')).toBeNull();
    expect(zonedInstant('yesterday', 'Europe/Paris')).toBeNull();
  });
});

describe('deliveries log query', () => {
  it('newest first, only the filters given', () => {
    expect(deliveriesQuery({})).toBe('newestFirst=true');
    expect(query(deliveriesQuery({ status: 'Failed', channel: '', target: 'https://h/x?y=1', from: '2026-03-01T00:00:00.000Z', to: null, pageSize: 10 }))).toEqual([
      ['newestFirst', 'true'], ['status', 'Failed'], ['target', 'https://h/x?y=1'], ['from', '2026-03-01T00:00:00.000Z'], ['pageSize', '10'],
    ]);
  });
});

describe('report window, columns and scores (issue 43)', () => {
  const now = Date.parse('2026-03-10T15:42:10Z');

  it('defaults to a window that holds today: six days back to now, in the profile zone', () => {
    expect(defaultWindow(now, 'Europe/London')).toEqual({ dateFrom: '2026-03-04T00:00', dateTo: '2026-03-10T15:43' });
    expect(defaultWindow(now, 'Asia/Tokyo')).toEqual({ dateFrom: '2026-03-05T00:00', dateTo: '2026-03-11T00:43' });
    // `last-7-days` ends at the start of today: an alert raised now would be left out.
    const p = { ...defaultParams(), intervalType: '', ...defaultWindow(now, 'Europe/Paris'), timeZone: 'Europe/Paris' };
    const q = query(reportQuery('AlertsReport', p));
    expect(q).toEqual([['DateFrom', '2026-03-03T23:00:00.000Z'], ['DateTo', '2026-03-10T15:43:00.000Z']]);
    expect(Date.parse(q[1]?.[1] ?? '')).toBeGreaterThan(now);
  });

  it('sends a typed local time as its instant, and anything else as typed', () => {
    expect(windowBound('2026-07-01T09:00', 'Europe/London')).toBe('2026-07-01T08:00:00.000Z');
    expect(windowBound('2026-07-01', 'Europe/London')).toBe('2026-07-01');
    expect(windowBound(' 2026-07-01T09:00:00+02:00 ', 'Europe/London')).toBe('2026-07-01T09:00:00+02:00');
  });

  it('shows no score for no data, and the score where something was driven', () => {
    expect(shownScore('DriverBehaviourReport', { Score: 100, JourneysCount: 0, DistanceKm: 0 })).toBeNull();
    expect(shownScore('DriverPerformanceSummaryReport', { Score: 100, JourneysCount: 0, DistanceKm: null })).toBeNull();
    expect(shownScore('DriverBehaviourReport', { Score: 100, JourneysCount: 2, DistanceKm: 31.5 })).toBe(100);
    expect(shownScore('DriverBehaviourReport', { Score: 0, JourneysCount: 1, DistanceKm: 4 })).toBe(0);
    expect(shownScore('AlertsReport', { Score: 5 })).toBeNull();
  });

  it('leaves out the ids that have a named neighbour', () => {
    expect(shownColumns([{ TenantVarCode: '1000', JourneyId: 'x', DeviceId: 'a', DeviceFriendlyName: 'Van', UserId: '3', DateTimeLocal: 't', DateTimeUtc: 'u' }]))
      .toEqual(['DeviceId', 'DeviceFriendlyName', 'DateTimeLocal']);
    expect(shownColumns([])).toEqual([]);
  });

  it('finds users by part of their login or name, in any case', () => {
    const u = { Username: 'jane.doe@example.com', FirstName: 'Jane', LastName: 'Okafor' };
    expect(userMatches(u, 'okaf')).toBe(true);
    expect(userMatches(u, 'JANE O')).toBe(true);
    expect(userMatches(u, 'example.com')).toBe(true);
    expect(userMatches(u, 'bob')).toBe(false);
    expect(userMatches(u, '  ')).toBe(true);
  });

  it('puts field names and addresses into words', () => {
    expect(fieldWords('EmergencyContactTelephoneNumber')).toBe('Phone');
    expect(fieldWords('Recipients[2].ContactId')).toBe('Recipients 3 › Contact Id');
    expect(plainAddress('mail:jane@example.com')).toBe('jane@example.com');
    expect(plainAddress('SMS:+447700900123')).toBe('+447700900123');
    expect(plainAddress(null)).toBe('');
  });
});
