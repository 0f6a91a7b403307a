// The console fit for duty (issue 43): every screen (e2e/screens.mjs, the ones the
// screenshots show, the users page among them) in light and dark at 1440×900 and 390×844 —
// axe finds nothing serious or critical, at phone width nothing is wider than the screen and
// the header's links, buttons and choices and the page's buttons, inputs and selects are at
// least 44 px tall — and the theme choice
// is applied before the page's own script and kept.
import { assert, base, browser, violations } from '../lib.mjs';
import { logIn, screens, seedScene, THEMES, themedContext, visit, WIDTHS } from '../screens.mjs';
import AxeBuilder from '@axe-core/playwright';

async function serious(page) {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 4).map((n) => n.target.join(' ')).join(', ')}`);
}

/** At phone width: the page's width, and touch targets under 44 px. */
async function phoneProblems(page) {
  return page.evaluate(() => {
    const problems = [];
    const width = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth > width) {
      const past = [...document.querySelectorAll('body *')]
        .filter((e) => e.getBoundingClientRect().right > width + 1)
        .slice(-3)
        .map((e) => `${e.tagName.toLowerCase()}.${typeof e.className === 'string' ? e.className.split(' ').join('.') : ''}`);
      problems.push(`${document.documentElement.scrollWidth} px wide (${past.join(', ')})`);
    }
    const targets = 'header.top nav a, header.top button, header.top select, .config-nav a, main button, main select, '
      + "main input:not([type=checkbox]):not([type=radio]):not([type=range]):not([type=hidden])";
    for (const e of document.querySelectorAll(targets)) {
      const box = e.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) continue; // not shown
      if (box.height < 44) problems.push(`${e.tagName.toLowerCase()} "${(e.textContent ?? '').trim().slice(0, 30)}" is ${Math.round(box.height)} px tall`);
    }
    return problems;
  });
}

export const scenarios = {
  async 'design-every-screen-both-themes-both-widths'() {
    const scene = await seedScene();
    const failures = [];
    for (const width of WIDTHS) {
      for (const theme of THEMES) {
        const context = await themedContext(browser, width, theme);
        const page = await context.newPage();
        page.on('pageerror', (e) => violations.push(`page error: ${e.message}`));
        page.on('console', (m) => {
          if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) violations.push(m.text());
        });
        const check = async (name) => {
          const where = `${name} at ${width.name} width in ${theme}`;
          const applied = await page.evaluate(() => ({
            theme: document.documentElement.dataset.theme, background: getComputedStyle(document.body).backgroundColor,
          }));
          if (applied.theme !== theme) failures.push(`${where}: data-theme is ${applied.theme}`);
          const dark = /rgb\((\d+), (\d+), (\d+)/.exec(applied.background)?.slice(1).map(Number).reduce((a, b) => a + b, 0) < 200;
          if (dark !== (theme === 'dark')) failures.push(`${where}: the page's background is ${applied.background}`);
          for (const v of await serious(page)) failures.push(`${where}: axe ${v}`);
          if (width.name === 'phone') for (const p of await phoneProblems(page)) failures.push(`${where}: ${p}`);
        };
        await page.goto(`${base}/login`);
        await page.locator('form.login').waitFor();
        await check('login');
        await logIn(page, scene.operator);
        for (const screen of screens(scene)) {
          try {
            await visit(page, screen, 150);
            await check(screen.name);
          } catch (e) {
            failures.push(`${screen.name} at ${width.name} width in ${theme}: ${e instanceof Error ? e.message.split('\n')[0] : e}`);
          }
        }
        await context.close();
      }
    }
    assert(failures.length === 0, `${failures.length} problems:\n  ${failures.join('\n  ')}`);
  },

  async 'design-theme-choice-applied-before-the-page-and-kept'() {
    const scene = await seedScene();
    const context = await themedContext(browser, WIDTHS[0], 'light');
    const page = await context.newPage();
    // What <html data-theme> says when the console's own module starts (the boot script ran first).
    await page.addInitScript(() => {
      document.addEventListener('readystatechange', () => {
        if (document.readyState === 'interactive') window.__themeAtParse = document.documentElement.getAttribute('data-theme');
      });
    });
    await logIn(page, scene.operator);
    await page.getByLabel('Theme').selectOption('dark');
    assert((await page.evaluate(() => document.documentElement.dataset.theme)) === 'dark', 'dark not applied');
    assert((await page.evaluate(() => localStorage.getItem('safetrack.theme'))) === 'dark', 'dark not kept');
    // A new tab with the same storage (and a light browser): the kept choice, before the page's script.
    const fresh = await themedContext(browser, WIDTHS[0], null, { storageState: await context.storageState() });
    const again = await fresh.newPage();
    await again.addInitScript(() => {
      document.addEventListener('readystatechange', () => {
        if (document.readyState === 'interactive') window.__themeAtParse = document.documentElement.getAttribute('data-theme');
      });
    });
    await again.goto(`${base}/alerts`);
    await again.locator('[data-testid=stream-state]').waitFor();
    const atParse = await again.evaluate(() => window.__themeAtParse);
    assert(atParse === 'dark', `data-theme when the document was parsed (before any module ran): ${atParse}`);
    assert((await again.getByLabel('Theme').inputValue()) === 'dark', 'the control shows the kept choice');
    // System: follows the browser's scheme.
    await again.getByLabel('Theme').selectOption('system');
    await again.emulateMedia({ colorScheme: 'dark' });
    const darkBg = await again.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await again.emulateMedia({ colorScheme: 'light' });
    const lightBg = await again.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert(darkBg !== lightBg, `system follows prefers-color-scheme (${darkBg} / ${lightBg})`);
    await fresh.close();
    await context.close();
  },
};
