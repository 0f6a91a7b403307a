// The eight reports and their parameters (docs/reports.md): which parameters each one
// reads, the query a form's values make, and the name of a downloaded CSV. Pure: the
// reports page and the tests share it.
import { fromZonedInput, startOfDayBefore, toZonedInput } from './replay';

export const REPORTS = [
  'DevicesOverviewReport',
  'AlertsReport',
  'AssetUtilisationReport',
  'DriverPerformanceSummaryReport',
  'DriverBehaviourReport',
  'DriverPerformanceDetailedReport',
  'DriverBehaviourViolationReport',
  'MonitoringReport',
] as const;
export type ReportName = (typeof REPORTS)[number];

export const INTERVAL_TYPES = [
  'this-week', 'this-month', 'this-quarter', 'this-year', 'this-financial-year', 'yesterday',
  'last-week', 'last-week-sunday', 'last-7-days', 'last-10-days', 'last-30-days', 'last-4-weeks',
  'last-12-weeks', 'last-3-months', 'last-6-months', 'last-12-months', 'last-month',
  'last-quarter', 'last-year', 'last-financial-year',
] as const;

export const VIOLATION_TYPES = ['Acceleration', 'Braking', 'Turning', 'Speeding'] as const;
export const DEVICE_STATUSES = ['Active', 'Inactive'] as const;
export const GROUP_BY = ['Driver', 'Vehicle'] as const;

/** The parameters a report reads beyond the window and the device filters. */
export type Extra = 'LastTimeHoursFilter' | 'GroupBy' | 'DrivingViolationTypes';

export function extras(report: ReportName): Extra[] {
  switch (report) {
    case 'DevicesOverviewReport':
      return ['LastTimeHoursFilter'];
    case 'DriverPerformanceSummaryReport':
    case 'DriverBehaviourReport':
      return ['GroupBy', 'DrivingViolationTypes'];
    case 'DriverPerformanceDetailedReport':
    case 'DriverBehaviourViolationReport':
      return ['DrivingViolationTypes'];
    default:
      return [];
  }
}

export function isReport(name: string): name is ReportName {
  return (REPORTS as readonly string[]).includes(name);
}

/** What the form holds. Empty strings and lists mean "not given". */
export interface ReportParams {
  /** One of INTERVAL_TYPES, or '' for DateFrom/DateTo. */
  intervalType: string;
  /** ISO 8601: a date alone, or a date and time (read in the tenant's zone). */
  dateFrom: string;
  dateTo: string;
  subtenants: boolean;
  groupIds: string[];
  deviceIds: string[];
  deviceTypes: string[];
  deviceStatus: string;
  userIds: string[];
  lastTimeHoursFilter: string;
  groupBy: string;
  violationTypes: string[];
  /**
   * The profile's zone: a `YYYY-MM-DDTHH:mm` window (what the form's inputs hold) is a
   * time there, sent as the instant it means (the API would read it in the tenant's).
   */
  timeZone?: string;
}

/** Days before today the default window starts (with today: a week). */
export const DEFAULT_DAYS_BACK = 6;

/**
 * The window a report opens with: from the start of the day six days ago to now, in the
 * profile's zone — today included (`last-7-days` ends at the start of today, so an alert
 * raised today would be missing from it).
 */
export function defaultWindow(now: number, zone: string | undefined): { dateFrom: string; dateTo: string } {
  // The inputs hold whole minutes: the end is the next minute, so what happened this
  // minute is in.
  return { dateFrom: startOfDayBefore(now, DEFAULT_DAYS_BACK, zone), dateTo: toZonedInput(now + 60_000, zone) };
}

const LOCAL_INPUT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/;

/** A window bound as the API gets it: a form's local time as its instant in the zone. */
export function windowBound(value: string, zone: string | undefined): string {
  const v = value.trim();
  if (!LOCAL_INPUT.test(v)) return v;
  const at = fromZonedInput(v, zone);
  return at === null ? v : new Date(at).toISOString();
}

export function defaultParams(): ReportParams {
  return {
    intervalType: 'last-7-days', dateFrom: '', dateTo: '', subtenants: false, groupIds: [],
    deviceIds: [], deviceTypes: [], deviceStatus: '', userIds: [], lastTimeHoursFilter: '',
    groupBy: '', violationTypes: [],
  };
}

/** The fields the form must fix before asking (the API would answer 400 anyway). */
export function missing(p: ReportParams): Array<'DateFrom' | 'DateTo'> {
  if (p.intervalType) return [];
  const out: Array<'DateFrom' | 'DateTo'> = [];
  if (!p.dateFrom.trim()) out.push('DateFrom');
  if (!p.dateTo.trim()) out.push('DateTo');
  return out;
}

const clean = (values: readonly string[]): string[] => values.map((v) => v.trim()).filter(Boolean);

/** The report's query string: only what it reads, arrays repeated, the window once. */
export function reportQuery(report: ReportName, p: ReportParams): string {
  const q = new URLSearchParams();
  if (p.intervalType) q.set('IntervalType', p.intervalType);
  else {
    if (p.dateFrom.trim()) q.set('DateFrom', windowBound(p.dateFrom, p.timeZone));
    if (p.dateTo.trim()) q.set('DateTo', windowBound(p.dateTo, p.timeZone));
  }
  if (p.subtenants) q.set('Subtenants', 'true');
  for (const id of clean(p.groupIds)) q.append('GroupIds', id);
  for (const id of clean(p.deviceIds)) q.append('DeviceIds', id);
  for (const type of clean(p.deviceTypes)) q.append('DeviceTypes', type);
  if (p.deviceStatus) q.set('DeviceStatus', p.deviceStatus);
  for (const id of clean(p.userIds)) q.append('UserIds', id);
  const wanted = extras(report);
  if (wanted.includes('LastTimeHoursFilter') && p.lastTimeHoursFilter.trim()) {
    q.set('LastTimeHoursFilter', p.lastTimeHoursFilter.trim());
  }
  if (wanted.includes('GroupBy') && p.groupBy) q.set('GroupBy', p.groupBy);
  if (wanted.includes('DrivingViolationTypes')) {
    for (const v of clean(p.violationTypes)) q.append('DrivingViolationTypes', v);
  }
  return q.toString();
}

export function reportPath(tenant: string, report: ReportName, p: ReportParams): string {
  const query = reportQuery(report, p);
  return `/V2/${encodeURIComponent(tenant)}/reports/${report}${query ? `?${query}` : ''}`;
}

/** `AlertsReport-1000-last-7-days.csv`, `…-2026-03-01_2026-03-31.csv`: safe on every disk. */
export function csvFilename(report: ReportName, tenant: string, p: ReportParams): string {
  const window = p.intervalType || [p.dateFrom, p.dateTo].map((d) => d.trim()).filter(Boolean).join('_') || 'report';
  const safe = (s: string): string => s.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|[-.]+$/g, '');
  return `${[report, safe(tenant), safe(window)].filter(Boolean).join('-')}.csv`;
}

/** A form's comma- or line-separated list. */
export function splitList(text: string): string[] {
  return text.split(/[,\n]/).map((s) => s.trim()).filter(Boolean);
}

/** The summary reports, whose rows carry a `Score`. */
const SCORED = new Set<ReportName>(['DriverPerformanceSummaryReport', 'DriverBehaviourReport']);

/**
 * A row's score as the console shows it: null ("no data") when nothing was driven — no
 * journey and no distance — where the API's formula answers 100 for nothing at all.
 */
export function shownScore(report: ReportName, row: Record<string, unknown>): number | null {
  if (!SCORED.has(report)) return null;
  const journeys = Number(row.JourneysCount ?? 0);
  const distance = Number(row.DistanceKm ?? 0);
  if (!journeys && !distance) return null;
  return typeof row.Score === 'number' ? row.Score : null;
}

/** Fields holding a date and time (shown in the profile's zone and culture). */
export const TIME_FIELDS = new Set(['StartTimeLocal', 'LastMoMessageTime', 'DateTimeLocal', 'DateTimeUtc']);

/** Fields the table leaves out: ids that have a named neighbour (`DeviceFriendlyName`, …). */
export const HIDDEN_FIELDS = new Set(['TenantVarCode', 'UserId', 'JourneyId', 'DateTimeUtc', 'LastMoMessageAgo']);

/** The columns a table of `rows` shows, in the rows' order, without the hidden ones. */
export function shownColumns(rows: ReadonlyArray<Record<string, unknown>>): string[] {
  return Object.keys(rows[0] ?? {}).filter((c) => !HIDDEN_FIELDS.has(c));
}
