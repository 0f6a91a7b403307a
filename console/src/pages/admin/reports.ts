// The seven reports (docs/reports.md): pick one, set its parameters, see the rows as a
// table, or download them as CSV — through the API client (`Accept: text/csv`), saved
// from a blob in the page: nothing leaves the origin.
import { api, v2 } from '../../api';
import { h } from '../../dom';
import { catalogues, t, type Key } from '../../i18n';
import { session, tenant } from '../../session';
import { formatDateTime, formatNumber, usableZone } from '../../format';
import { typedBack } from '../../replay';
import {
  DEVICE_STATUSES, GROUP_BY, INTERVAL_TYPES, REPORTS, TIME_FIELDS, VIOLATION_TYPES, csvFilename, defaultParams, defaultWindow,
  extras, isReport, missing, reportPath, shownColumns, shownScore, splitList, type ReportName, type ReportParams,
} from '../../reports';
import { checkbox, field, fieldWords, page, resultLine, select } from './common';

interface Named {
  GroupId?: string;
  DeviceId?: string;
  Name?: string | null;
  FriendlyName?: string | null;
}

interface NamedUser {
  UserId?: string;
  Username?: string;
  FirstName?: string | null;
  LastName?: string | null;
}

/** A column's heading in the reader's words (the catalogue's, else the field split into words). */
function heading(field: string): string {
  const key = `reports.col.${field}` as Key;
  return key in (catalogues.en ?? {}) ? t(key) : fieldWords(field);
}

/** A cell as the reader reads it: times in the profile's zone, numbers in its culture. */
function cellText(report: ReportName, field: string, row: Record<string, unknown>): string {
  const v = row[field];
  if (field === 'Score') {
    const score = shownScore(report, row);
    return score === null ? t('reports.noData') : formatNumber(score, 0);
  }
  if (v === null || v === undefined || v === '') return '';
  if (TIME_FIELDS.has(field) && typeof v === 'string') return formatDateTime(v);
  if (typeof v === 'number') return formatNumber(v, 2);
  if (typeof v === 'boolean') return v ? t('reports.yes') : t('reports.no');
  if (Array.isArray(v)) return v.map(String).join(', ');
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

export function reportsPage(outlet: HTMLElement): () => void {
  const result = resultLine('reports-result');
  const report = select(REPORTS.map((r) => [r, t(`reports.name.${r}` as Key)]));
  const interval = select([
    ...INTERVAL_TYPES.map((i): [string, string] => [i, t(`reports.interval.${i}` as Key)]),
    ['', t('reports.customDates')],
  ], '');
  // The default window holds today (from six days ago to now), in the profile's zone; a
  // browser writes the inputs in its own locale, so each is also shown back as the
  // profile writes dates.
  const zone = usableZone(session()?.TimeZoneId);
  const initial = defaultWindow(Date.now(), zone);
  const dateFrom = h('input', { type: 'datetime-local', 'data-testid': 'report-from' });
  const dateTo = h('input', { type: 'datetime-local', 'data-testid': 'report-to' });
  dateFrom.value = initial.dateFrom;
  dateTo.value = initial.dateTo;
  const zoneName = zone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  const fromBack = h('output', { class: 'hint typed-back', 'data-testid': 'report-from-shown' });
  const toBack = h('output', { class: 'hint typed-back', 'data-testid': 'report-to-shown' });
  const fromField = field(t('reports.dateFrom'), dateFrom, t('reports.zone', { zone: zoneName }));
  const toField = field(t('reports.dateTo'), dateTo, t('reports.zone', { zone: zoneName }));
  fromField.append(fromBack);
  toField.append(toBack);
  const showBack = (): void => {
    fromBack.textContent = typedBack(dateFrom.value, zone);
    toBack.textContent = typedBack(dateTo.value, zone);
  };
  dateFrom.addEventListener('input', showBack);
  dateTo.addEventListener('input', showBack);
  showBack();
  const subtenants = checkbox(t('reports.subtenants'));
  const groups = h('select', { multiple: true, size: 4 });
  const devices = h('select', { multiple: true, size: 6 });
  const deviceTypes = h('input', { autocomplete: 'off' });
  const deviceStatus = select([['', t('reports.anyStatus')], ...DEVICE_STATUSES.map((s): [string, string] => [s, t(`reports.deviceStatus.${s}` as Key)])]);
  const users = h('select', { multiple: true, size: 6, 'data-testid': 'report-users' });
  const lastHours = h('input', { type: 'number', step: '1' });
  const lastHoursField = field(t('reports.lastTimeHoursFilter'), lastHours, t('reports.lastTimeHoursHint'));
  const groupBy = select([['', t('reports.groupByDefault')], ...GROUP_BY.map((g): [string, string] => [g, t(`reports.groupBy.${g}` as Key)])]);
  const groupByField = field(t('reports.groupBy'), groupBy);
  const violations = VIOLATION_TYPES.map((v) => ({ v, box: checkbox(t(`reports.violation.${v}` as Key), false, { 'data-violation': v }) }));
  const violationsField = h('fieldset', {}, h('legend', {}, t('reports.violationTypes')), ...violations.map((x) => x.box.wrap));
  const show = h('button', { type: 'submit' }, t('reports.show'));
  const download = h('button', { type: 'button', 'data-testid': 'report-download' }, t('reports.downloadCsv'));
  const form = h(
    'form',
    { class: 'admin-form report-form', 'data-testid': 'report-form' },
    field(t('reports.report'), report),
    field(t('reports.interval'), interval),
    fromField,
    toField,
    subtenants.wrap,
    field(t('reports.groups'), groups),
    field(t('reports.devices'), devices),
    field(t('reports.deviceTypes'), deviceTypes, t('reports.listHint')),
    field(t('reports.deviceStatus'), deviceStatus),
    field(t('reports.userIds'), users),
    lastHoursField,
    groupByField,
    violationsField,
    h('div', { class: 'buttons' }, show, download),
  );
  const output = h('div', { class: 'report-output', 'data-testid': 'report-output', 'aria-live': 'polite' });
  outlet.append(page('reports-page', t('reports.heading'), form, result.el, output));

  const selected = (el: HTMLSelectElement): string[] => [...el.selectedOptions].map((o) => o.value);
  const params = (): ReportParams => ({
    ...defaultParams(),
    intervalType: interval.value,
    dateFrom: dateFrom.value,
    dateTo: dateTo.value,
    subtenants: subtenants.input.checked,
    groupIds: selected(groups),
    deviceIds: selected(devices),
    deviceTypes: splitList(deviceTypes.value),
    deviceStatus: deviceStatus.value,
    userIds: selected(users),
    timeZone: zone,
    lastTimeHoursFilter: lastHours.value,
    groupBy: groupBy.value,
    violationTypes: violations.filter((x) => x.box.input.checked).map((x) => x.v),
  });
  const current = (): ReportName => (isReport(report.value) ? report.value : 'DevicesOverviewReport');
  const adapt = (): void => {
    const wanted = extras(current());
    lastHoursField.hidden = !wanted.includes('LastTimeHoursFilter');
    groupByField.hidden = !wanted.includes('GroupBy');
    violationsField.hidden = !wanted.includes('DrivingViolationTypes');
    fromField.hidden = toField.hidden = interval.value !== '';
  };
  report.addEventListener('change', adapt);
  interval.addEventListener('change', adapt);
  adapt();

  /** The parameters, or null after pointing at what is missing. */
  const ready = (): ReportParams | null => {
    const p = params();
    const absent = missing(p);
    dateFrom.setAttribute('aria-invalid', String(absent.includes('DateFrom')));
    dateTo.setAttribute('aria-invalid', String(absent.includes('DateTo')));
    if (absent.length) {
      result.fail(new Error(t('reports.windowNeeded')));
      (absent[0] === 'DateFrom' ? dateFrom : dateTo).focus();
      return null;
    }
    result.clear();
    return p;
  };

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const p = ready();
    if (!p) return;
    show.disabled = true;
    void api
      .get<Array<Record<string, unknown>>>(reportPath(tenant(), current(), p))
      .then((rows) => output.replaceChildren(rowsTable(current(), rows)))
      .catch((err: unknown) => result.fail(err))
      .finally(() => (show.disabled = false));
  });
  download.addEventListener('click', () => {
    const p = ready();
    if (!p) return;
    download.disabled = true;
    void api
      .get<Response>(reportPath(tenant(), current(), p), { raw: true, headers: { Accept: 'text/csv' } })
      .then((r) => r.blob())
      .then((blob) => {
        saveFile(blob, csvFilename(current(), tenant(), p));
        result.ok(t('reports.downloaded'));
      })
      .catch((err: unknown) => result.fail(err))
      .finally(() => (download.disabled = false));
  });

  let alive = true;
  void Promise.all([
    api.all<Named>(v2(tenant(), 'groups')).catch(() => [] as Named[]),
    api.all<Named>(v2(tenant(), 'devices')).catch(() => [] as Named[]),
    api.all<NamedUser>(v2(tenant(), 'users')).catch(() => [] as NamedUser[]),
  ]).then(([gs, ds, us]) => {
    if (!alive) return;
    const byName = (a: [string, string], b: [string, string]): number => a[1].localeCompare(b[1]);
    const options = (pairs: Array<[string, string]>): HTMLOptionElement[] => pairs.sort(byName).map(([v, text]) => h('option', { value: v }, text));
    groups.replaceChildren(...options(gs.map((g) => [g.GroupId ?? '', g.Name ?? g.GroupId ?? ''])));
    devices.replaceChildren(...options(ds.map((d) => [d.DeviceId ?? '', d.FriendlyName || d.DeviceId || ''])));
    users.replaceChildren(
      ...options(
        us.map((u) => {
          const name = [u.FirstName, u.LastName].filter(Boolean).join(' ');
          return [u.UserId ?? '', name ? `${name} (${u.Username ?? ''})` : (u.Username ?? u.UserId ?? '')];
        }),
      ),
    );
  });
  return () => {
    alive = false;
  };
}

function rowsTable(report: ReportName, rows: Array<Record<string, unknown>>): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'empty', 'data-testid': 'report-empty' }, t('reports.noRows'));
  const columns = shownColumns(rows);
  return h(
    'div',
    { class: 'table-scroll', tabindex: 0, role: 'region', 'aria-label': t(`reports.name.${report}` as Key) },
    h(
      'table',
      { class: 'admin-table report-table', 'data-testid': 'report-table' },
      h('caption', {}, t('reports.rows', { n: rows.length })),
      h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', { scope: 'col', 'data-field': c }, heading(c))))),
      h('tbody', {}, ...rows.map((r) => h('tr', {}, ...columns.map((c) => h('td', { 'data-label': heading(c), 'data-field': c }, cellText(report, c, r)))))),
    ),
  );
}

/** Saves `blob` as a download named `name` (an object URL of this origin, revoked after). */
function saveFile(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: name, class: 'visually-hidden' });
  document.body.append(a);
  a.click();
  a.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
