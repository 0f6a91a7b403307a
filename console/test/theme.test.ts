import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { effectiveTheme, THEME_KEY, themeChoice } from '../src/preferences';

describe('theme', () => {
  it('reads a stored choice, anything else is system', () => {
    expect(themeChoice('dark')).toBe('dark');
    expect(themeChoice('light')).toBe('light');
    expect(themeChoice('system')).toBe('system');
    expect(themeChoice('purple')).toBe('system');
    expect(themeChoice(null)).toBe('system');
  });
  it('system follows the browser', () => {
    expect(effectiveTheme('system', true)).toBe('dark');
    expect(effectiveTheme('system', false)).toBe('light');
    expect(effectiveTheme('light', true)).toBe('light');
  });
  it('the script run before the first paint reads the same key, and the page loads it', () => {
    const boot = readFileSync(new URL('../scripts/make-theme-boot.mjs', import.meta.url), 'utf8');
    expect(boot).toContain(`THEME_KEY = '${THEME_KEY}'`);
    const name = /'(theme-boot-[^']+\.js)'/.exec(boot)?.[1];
    expect(name).toBeTruthy();
    const html = readFileSync(new URL('../index.html', import.meta.url), 'utf8');
    expect(html).toContain(`<script src="/assets/${name}"></script>`);
  });
});
