// The message catalogue: t(key, params) in the chosen language, English as the fallback.
import { en, type Key } from './en';
import { fr } from './fr';

export type { Key };
export const catalogues: Record<string, Record<Key, string>> = { en, fr };
export const languages = Object.keys(catalogues);

let current: Record<Key, string> = en;
let currentLanguage = 'en';

/** Picks the first supported of the candidates (`fr-CA` → `fr`), else English. */
export function chooseLanguage(candidates: ReadonlyArray<string | null | undefined>): string {
  for (const c of candidates) {
    if (!c) continue;
    const base = c.toLowerCase().split(/[-_]/)[0] ?? '';
    if (base in catalogues) return base;
  }
  return 'en';
}

export function setLanguage(language: string): void {
  currentLanguage = language in catalogues ? language : 'en';
  current = catalogues[currentLanguage] ?? en;
  document.documentElement.lang = currentLanguage;
}

export function language(): string {
  return currentLanguage;
}

/** `{name}` placeholders are replaced by `params[name]`. */
export function format(template: string, params: Record<string, string | number> = {}): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in params ? String(params[name]) : whole,
  );
}

export function t(key: Key, params?: Record<string, string | number>): string {
  return format(current[key] ?? en[key], params);
}
