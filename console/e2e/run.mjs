// End-to-end tests of the console in real headless Chromium (Debian's /usr/bin/chromium,
// driven by playwright-core: no browser download), against a running safetrack server.
// Started by tests/browser/console.rs, which starts the server; also runnable by hand:
//   SAFETRACK_URL=http://127.0.0.1:8080 SAFETRACK_ADMIN='admin@safetrack.local:password' \
//   SCENARIOS=login-page,sos node e2e/run.mjs
// Scenarios live in scenarios/*.mjs (one file per area, each exporting `scenarios`); shared
// helpers in lib.mjs. Prints one line per scenario and a closing `N passed, N failed`;
// exits non-zero on failure.
import { readdirSync } from 'node:fs';
import { assert, browser, origin, outside, violations } from './lib.mjs';

const wanted = (process.env.SCENARIOS ?? 'all').split(',').map((s) => s.trim());
const scenarios = {};
for (const file of readdirSync(new URL('./scenarios/', import.meta.url)).filter((f) => f.endsWith('.mjs')).sort()) {
  const module = await import(new URL(`./scenarios/${file}`, import.meta.url).href);
  for (const [name, run] of Object.entries(module.scenarios)) {
    if (name in scenarios) throw new Error(`scenario ${name} is defined twice`);
    scenarios[name] = run;
  }
}

let passed = 0;
let failed = 0;
for (const [name, run] of Object.entries(scenarios)) {
  if (!wanted.includes('all') && !wanted.includes(name)) continue;
  const started = Date.now();
  outside.length = 0;
  violations.length = 0;
  try {
    await run();
    assert(outside.length === 0, `requests outside ${origin}: ${outside.join(', ')}`);
    assert(violations.length === 0, `content security policy / page errors: ${violations.join(' | ')}`);
    passed += 1;
    console.log(`ok ${name} (${Date.now() - started} ms)`);
  } catch (e) {
    failed += 1;
    console.log(`FAILED ${name}: ${e instanceof Error ? e.stack ?? e.message : e}`);
  }
}
await browser.close();
console.log(`e2e: ${passed} passed, ${failed} failed`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
