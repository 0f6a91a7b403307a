// Screenshots of every screen of the console at 1440×900 and 390×844, light and dark, into
// screenshots/ (git-ignored): `npm run screenshots` against a running server, like the e2e
// scenarios:
//   SAFETRACK_URL=http://127.0.0.1:8080 SAFETRACK_ADMIN='admin@safetrack.local:password' \
//     npm run screenshots
// It sets a scene of its own through the public API (e2e/screens.mjs: tenants, ten devices
// with tracks, an open SOS, an acknowledged alert, users with emergency contacts, …) and logs
// in as that scene's operator. SCREENS=queue,map limits the screens; CONSOLE_DIST=dist serves
// the console's files from a local `vite build` instead of the binary's (no server rebuild).
// Names: screenshots/<screen>-<desktop|phone>-<light|dark>.png (and login-…).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { base, browser } from '../e2e/lib.mjs';
import { logIn, screens, seedScene, THEMES, themedContext, visit, WIDTHS } from '../e2e/screens.mjs';

const out = fileURLToPath(new URL('../screenshots/', import.meta.url));
mkdirSync(out, { recursive: true });
const wanted = process.env.SCREENS ? new Set(process.env.SCREENS.split(',').map((s) => s.trim())) : null;
const want = (name) => !wanted || wanted.has(name);

const started = Date.now();
const scene = await seedScene();
console.log(`scene set in ${Date.now() - started} ms: operator ${scene.operator.username}, SOS ${scene.sos.tc}/${scene.sos.id}`);
let written = 0;
const problems = [];
for (const width of WIDTHS) {
  for (const theme of THEMES) {
    const context = await themedContext(browser, width, theme);
    const page = await context.newPage();
    page.on('pageerror', (e) => problems.push(`${width.name} ${theme}: page error: ${e.message}`));
    const shot = async (name, viewportOnly = false) => {
      const path = join(out, `${name}-${width.name}-${theme}.png`);
      await page.screenshot({ path, fullPage: !viewportOnly, animations: 'disabled', caret: 'hide' });
      const wide = await page.evaluate(() => document.documentElement.scrollWidth);
      if (wide > width.width) problems.push(`${name} ${width.name} ${theme}: ${wide} px wide`);
      written += 1;
    };
    if (want('login')) {
      await page.goto(`${base}/login`);
      await page.locator('form.login').waitFor();
      await shot('login');
    }
    await logIn(page, scene.operator);
    for (const screen of screens(scene)) {
      if (!want(screen.name)) continue;
      try {
        await visit(page, screen);
        await shot(screen.name, screen.viewportOnly);
      } catch (e) {
        problems.push(`${screen.name} ${width.name} ${theme}: ${e instanceof Error ? e.message.split('\n')[0] : e}`);
        await shot(`${screen.name}-FAILED`).catch(() => undefined);
      }
    }
    await context.close();
  }
}
await browser.close();
console.log(`${written} screenshots in ${out} (${Math.round((Date.now() - started) / 1000)} s)`);
for (const p of problems) console.log(`problem: ${p}`);
process.exit(problems.length ? 1 : 0);
