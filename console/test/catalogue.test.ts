import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { catalogues, chooseLanguage, format } from '../src/i18n';
import { en } from '../src/i18n/en';

const placeholders = (s: string): string[] => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '').sort();

describe('message catalogue', () => {
  it('ships English and at least one other language', () => {
    expect(Object.keys(catalogues).length).toBeGreaterThanOrEqual(2);
  });

  for (const [language, catalogue] of Object.entries(catalogues)) {
    it(`${language} has every key, no other, none empty, the same placeholders`, () => {
      const missing = Object.keys(en).filter((k) => !(k in catalogue));
      const extra = Object.keys(catalogue).filter((k) => !(k in en));
      expect(missing, `missing in ${language}`).toEqual([]);
      expect(extra, `unknown in ${language}`).toEqual([]);
      for (const [key, text] of Object.entries(catalogue)) {
        expect(text.trim(), `${language} ${key} is empty`).not.toBe('');
        expect(placeholders(text), `${language} ${key}`).toEqual(placeholders(en[key as keyof typeof en]));
      }
    });
  }

  it('every key the sources name exists in the catalogue', () => {
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (path.endsWith('.ts') && !path.includes('i18n')) files.push(path);
      }
    };
    walk(join(dirname(fileURLToPath(import.meta.url)), '..', 'src'));
    const unknown: string[] = [];
    for (const file of files) {
      for (const m of readFileSync(file, 'utf8').matchAll(/\bt\('([\w.]+)'/g)) {
        if (!((m[1] ?? '') in en)) unknown.push(`${file}: ${m[1]}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  it('picks the language from the profile, else the browser, else English', () => {
    expect(chooseLanguage(['fr-CA', 'en'])).toBe('fr');
    expect(chooseLanguage([null, 'de-DE', 'fr'])).toBe('fr');
    expect(chooseLanguage([undefined, 'de'])).toBe('en');
    expect(format('{a} and {b}', { a: 1 })).toBe('1 and {b}');
  });
});
