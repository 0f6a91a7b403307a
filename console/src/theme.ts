// The theme choice (light, dark, or the browser's): on <html data-theme>, kept in
// localStorage. `theme-boot` (scripts/make-theme-boot.mjs) applied the stored one before the
// first paint; this is the control that changes it (in the header and on the login page).
import { h } from './dom';
import { t } from './i18n';
import { THEME_KEY, THEMES, themeChoice, type Theme } from './preferences';

/** The stored choice (`system` when none or unreadable). */
export function storedTheme(): Theme {
  try {
    return themeChoice(localStorage.getItem(THEME_KEY));
  } catch {
    return 'system';
  }
}

/** Puts the choice on <html> and keeps it. */
export function applyTheme(choice: Theme): void {
  document.documentElement.dataset.theme = choice;
  try {
    localStorage.setItem(THEME_KEY, choice);
  } catch {
    // Storage refused (private mode): the choice lasts for this page.
  }
  // Pages drawing on a canvas (the map's outline) read the theme's colours again.
  document.dispatchEvent(new CustomEvent('safetrack:theme'));
}

/** The choice, labelled (one per page: its id is fixed). */
export function themeControl(): HTMLElement {
  const choice = h('select', { id: 'theme-choice', class: 'theme-choice', 'data-testid': 'theme-choice' },
    ...THEMES.map((v) => h('option', { value: v }, t(`theme.${v}`))));
  choice.value = storedTheme();
  choice.addEventListener('change', () => applyTheme(themeChoice(choice.value)));
  return h('span', { class: 'theme' }, h('label', { for: 'theme-choice', class: 'visually-hidden' }, t('theme.label')), choice);
}

