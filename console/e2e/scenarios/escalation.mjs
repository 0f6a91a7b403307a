// The escalation policy on the alert page (issue 45 §3): the step that fired at the raise
// shows its instructions (the response procedure) and when the next step fires, and the
// step is on the timeline with them.
import { assert, base, call, deviceWithSos, login, newPage, SECOND, sos, tenant } from '../lib.mjs';

export const scenarios = {
  async 'escalation-instructions'() {
    const tc = await tenant('1000', 'E2E escalation');
    const { location } = await call('POST', `/V2/${tc}/escalationpolicies`, {
      Name: 'Lone worker, night shift',
      Steps: [
        { AfterMinutes: 0, Instructions: 'Call the worker on +44 7700 900123.', Recipients: [] },
        { AfterMinutes: 30, Instructions: 'Send someone to the last position.', Recipients: [] },
      ],
    });
    const policy = location.split('/').pop();
    await call('POST', `/V2/${tc}/eventnotifications`, {
      NotificationName: 'SOS', EventsExpression: 'Emergency', Severity: '2', RaiseAlert: true, Recipients: [],
      EscalationPolicyId: policy,
    });
    const device = await deviceWithSos(tc);
    await sos(tc, device);
    const { json: open } = await call('GET', `/V2/${tc}/alerts?status=Open`);
    const id = open[0].AlertId;
    const page = await newPage();
    await login(page);
    await page.goto(`${base}/alerts/${tc}/${id}`);
    // Step 1 fires on the escalation worker's first pass (its interval: a second); the
    // page hears the alert change on the stream.
    const instructions = page.locator('[data-testid=escalation-instructions]', { hasText: 'Call the worker on +44 7700 900123.' });
    await instructions.waitFor({ timeout: 10 * SECOND });
    const step = await page.locator('[data-testid=escalation-step]').textContent();
    assert(step === 'Policy "Lone worker, night shift": step 1 of 2', `step: ${step}`);
    const next = await page.locator('[data-testid=escalation-next]').textContent();
    assert(/^Next step: .* \(in (29|30) min\)$/.test(next ?? ''), `next: ${next}`);
    // First on the page: before the summary.
    const first = await page.evaluate(() => document.querySelector('.alert-info')?.firstElementChild?.getAttribute('data-testid'));
    assert(first === 'escalation', `first section: ${first}`);
    await page.reload();
    const entry = page.locator('li[data-kind=EscalationStep]', { hasText: 'Call the worker on +44 7700 900123.' });
    await entry.waitFor({ timeout: 5 * SECOND });
    // An alert without a policy shows no box.
    const plain = await tenant('1000', 'E2E no policy');
    await call('POST', `/V2/${plain}/eventnotifications`, {
      NotificationName: 'SOS', EventsExpression: 'Emergency', Severity: '2', RaiseAlert: true, Recipients: [],
    });
    const other = await deviceWithSos(plain);
    await sos(plain, other);
    const { json: plainOpen } = await call('GET', `/V2/${plain}/alerts?status=Open`);
    await page.goto(`${base}/alerts/${plain}/${plainOpen[0].AlertId}`);
    await page.locator('[data-testid=alert-summary][data-status=Open]').waitFor();
    assert(await page.locator('[data-testid=escalation]').isHidden(), 'no escalation box without a policy');
    await page.context().close();
  },
};
