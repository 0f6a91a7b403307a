// Writes public/assets/theme-boot.js: the one classic script the page loads before its first
// paint, so a dark theme never flashes light. It only reads the operator's theme choice from
// localStorage (src/preferences.ts: THEME_KEY, themeChoice) onto <html data-theme>; the
// stylesheet does the rest (`system` follows prefers-color-scheme). The server's policy allows
// no inline script, and only files under /assets/ (served as immutable): if its text ever
// changes, change its name here and in index.html.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const THEME_KEY = 'safetrack.theme';
const source = `(function () {
  var theme = 'system';
  try {
    var stored = window.localStorage.getItem(${JSON.stringify(THEME_KEY)});
    if (stored === 'light' || stored === 'dark') theme = stored;
  } catch (e) {}
  document.documentElement.setAttribute('data-theme', theme);
})();
`;
const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'public', 'assets', 'theme-boot-1.js');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, source);
