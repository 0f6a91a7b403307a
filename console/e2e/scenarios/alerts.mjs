// The alert scenarios: login, the queue, an alert's actions across two consoles, tenant
// isolation, session expiry.
import { admin, assert, axe, base, call, deviceWithSos, login, newPage, SECOND, sos, sosNotification, tenant, unique } from '../lib.mjs';

export const scenarios = {
  async 'login-page'() {
    const page = await newPage();
    await page.goto(base + '/alerts');
    await page.waitForURL(/\/login\?next=%2Falerts/);
    await page.getByLabel('Username').waitFor();
    await axe(page, 'the login page');
    await page.context().close();
  },

  async 'wrong-password'() {
    const page = await newPage();
    await page.goto(base + '/login');
    await page.getByLabel('Username').fill(admin.username);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator('[data-testid=login-message][data-reason=invalid]').waitFor({ timeout: 5 * SECOND });
    await page.context().close();
  },

  async 'sos-appears-announced'() {
    const tc = await tenant('1000', 'E2E SOS');
    await sosNotification(tc);
    const device = await deviceWithSos(tc);
    const page = await newPage();
    await login(page);
    await axe(page, 'the alert queue');
    const started = Date.now();
    await sos(tc, device);
    const row = page.locator(`tr[data-alert^="${tc}/"]`);
    await row.waitFor({ timeout: 2 * SECOND });
    await page.locator('[data-testid=banners] .banner').first().waitFor({ timeout: 2 * SECOND - (Date.now() - started) });
    assert(/New alert/.test(await page.title()), `title: ${await page.title()}`);
    assert(Number(await page.evaluate(() => document.body.dataset.announcements ?? '0')) >= 1, 'announced');
    await page.context().close();
  },

  async 'ack-seen-by-second-console'() {
    const tc = await tenant('1000', 'E2E two consoles');
    await sosNotification(tc);
    const device = await deviceWithSos(tc);
    await sos(tc, device);
    const { json: open } = await call('GET', `/V2/${tc}/alerts?status=Open`);
    const id = open[0].AlertId;
    const [one, two] = [await newPage(), await newPage()];
    await login(one);
    await login(two);
    for (const p of [one, two]) {
      await p.goto(`${base}/alerts/${tc}/${id}`);
      await p.locator('[data-testid=alert-summary][data-status=Open]').waitFor();
      await p.locator('[data-testid=stream-state][data-state=live]').waitFor({ timeout: 5 * SECOND });
    }
    await axe(one, 'an alert page');
    await one.getByLabel('Note').first().fill('Calling the driver now');
    await one.getByRole('button', { name: 'Acknowledge' }).click();
    const started = Date.now();
    await two.locator('[data-testid=alert-summary][data-status=Acknowledged]').waitFor({ timeout: 2 * SECOND });
    await two.locator('[data-testid=timeline] li[data-kind=Acknowledged]', { hasText: 'Calling the driver now' })
      .waitFor({ timeout: 2 * SECOND - (Date.now() - started) });
    // The second console acknowledging too is told what happened, not shown an error page.
    await two.reload();
    // Resolving before the reloaded page is live would test the reload, not the stream.
    await two.locator('[data-testid=alert-summary][data-status=Acknowledged]').waitFor();
    await two.locator('[data-testid=stream-state][data-state=live]').waitFor({ timeout: 5 * SECOND });
    await one.getByLabel('Outcome').selectOption('FalseAlarm');
    await one.getByLabel('Resolution').fill('Pocket dial');
    await one.getByRole('button', { name: 'Resolve' }).click();
    await two.locator('[data-testid=alert-summary][data-status=Resolved]').waitFor({ timeout: 5 * SECOND });
    const { json: resolved } = await call('GET', `/V2/${tc}/alerts/${id}`);
    assert(resolved.Outcome === 'FalseAlarm' && resolved.Resolution === 'Pocket dial', JSON.stringify(resolved));
    await one.context().close();
    await two.context().close();
  },

  async 'foreign-tenant-never-appears'() {
    const mine = await tenant('1000', 'E2E mine');
    const theirs = await tenant('1000', 'E2E theirs');
    for (const tc of [mine, theirs]) await sosNotification(tc);
    const user = { username: `op${unique()}@e2e.example`, password: 'a-long-e2e-password' };
    await call('POST', `/V2/${mine}/users`, { Username: user.username, Password: user.password, UserRoleId: 'Manager', IsPortalEnabled: true });
    const page = await newPage();
    await login(page, user);
    await sos(theirs, await deviceWithSos(theirs));
    await sos(mine, await deviceWithSos(mine));
    await page.locator(`tr[data-alert^="${mine}/"]`).waitFor({ timeout: 2 * SECOND });
    await page.waitForTimeout(500);
    assert((await page.locator(`tr[data-alert^="${theirs}/"]`).count()) === 0, 'a foreign alert is in the queue');
    await page.context().close();
  },

  async 'session-expiry-returns-to-login'() {
    const page = await newPage();
    await login(page);
    await page.goto(base + '/map');
    await page.locator('[data-testid=device-map]').waitFor();
    // The session ends (its cookie is gone); the next API read answers 401.
    await page.context().clearCookies();
    await page.evaluate(() => {
      history.pushState(null, '', '/map?again=1');
      dispatchEvent(new PopStateEvent('popstate'));
    });
    await page.waitForURL(/\/login\?next=%2Fmap.*expired=1/);
    await page.locator('[data-testid=login-message]', { hasText: 'Your session has expired' }).waitFor();
    await page.getByLabel('Username').fill(admin.username);
    await page.getByLabel('Password').fill(admin.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(/\/map/);
    await page.locator('[data-testid=device-map]').waitFor();
    await page.context().close();
  },
};

