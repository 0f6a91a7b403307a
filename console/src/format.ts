// Times and numbers as people read them: ages that tick, and dates in the profile's
// time zone, formatted by its culture (the browser's Intl).
import { t } from './i18n';

/** `12 s`, `4 min`, `2 h 5 min`, `3 d 4 h` (seconds since `since`). */
export function formatAge(sinceIso: string | null | undefined, now: number): string {
  if (!sinceIso) return t('alert.none');
  const since = Date.parse(sinceIso);
  if (Number.isNaN(since)) return t('alert.none');
  const seconds = Math.max(0, Math.floor((now - since) / 1000));
  if (seconds < 60) return t('age.seconds', { n: seconds });
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return t('age.minutes', { n: minutes });
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return t('age.hours', { h: hours, m: minutes % 60 });
  return t('age.days', { d: Math.floor(hours / 24), h: hours % 24 });
}

export interface Locale {
  /** IANA zone (`Europe/Paris`); absent: the browser's. */
  timeZone?: string | null;
  /** BCP 47 (`fr-FR`); absent: the browser's. */
  culture?: string | null;
}

let locale: Locale = {};

export function setLocale(next: Locale): void {
  locale = { ...next };
}

/** A valid IANA zone, else undefined (the browser's). */
export function usableZone(zone: string | null | undefined): string | undefined {
  if (!zone) return undefined;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return zone;
  } catch {
    return undefined;
  }
}

function validCulture(culture: string | null | undefined): string | undefined {
  if (!culture) return undefined;
  try {
    return Intl.getCanonicalLocales(culture)[0];
  } catch {
    return undefined;
  }
}

/** A date and time in the profile's zone and culture (an unknown one falls back quietly). */
export function formatDateTime(iso: string | null | undefined, at: Locale = locale): string {
  if (!iso) return t('alert.none');
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat(validCulture(at.culture), {
    dateStyle: 'medium',
    timeStyle: 'medium',
    timeZone: usableZone(at.timeZone),
  }).format(date);
}

export function formatNumber(n: number, digits = 5, at: Locale = locale): string {
  return new Intl.NumberFormat(validCulture(at.culture), { maximumFractionDigits: digits }).format(n);
}
