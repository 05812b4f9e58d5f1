// Drives the gateway's dashboard in Debian's chromium (headless) through playwright-core,
// for gateway/dashboard_browser_test.go: signs in through the form, waits for the live
// numbers to reach what the test sent, searches the catalog, takes a screenshot, evicts
// every thread, and prints what the page showed as one JSON object.
//
// Environment: BASE_URL, ADMIN_KEY, CHROMIUM (the browser's path), EXPECT_REQUESTS,
// EXPECT_TOOLS, SCREENSHOT (the PNG to write).
import { chromium } from 'playwright-core';

const env = process.env;
const out = { errors: [] };
const browser = await chromium.launch({
  executablePath: env.CHROMIUM,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
  page.setDefaultTimeout(20000);
  page.on('pageerror', (e) => out.errors.push('pageerror: ' + e.message));

  // Signed out, /admin/ is the sign-in form (a 401, which the console reports).
  const first = await page.goto(env.BASE_URL + '/admin/');
  out.signInStatus = first.status();
  await page.fill('#key', env.ADMIN_KEY);
  page.on('console', (m) => { if (m.type() === 'error') out.errors.push('console: ' + m.text()); });
  await Promise.all([page.waitForURL(env.BASE_URL + '/admin/'), page.click('button[type=submit]')]);
  const cookies = await page.context().cookies();
  out.cookie = cookies.map((c) => ({ name: c.name, httpOnly: c.httpOnly, sameSite: c.sameSite, path: c.path }));

  const value = (id) => page.$eval('#' + id, (e) => e.dataset.value);
  await page.waitForFunction((n) => document.getElementById('total-requests').dataset.value === n, env.EXPECT_REQUESTS);
  await page.waitForFunction(() => document.getElementById('conn').textContent === 'live');
  out.requests = Number(await value('total-requests'));
  out.hitRate = Number(await value('total-hit-rate'));
  out.hitRateText = await page.textContent('#total-hit-rate');
  out.threads = Number(await value('threads-count'));

  await page.waitForFunction((n) => document.querySelectorAll('#request-log tbody tr[data-request-id]').length === n,
    Math.min(Number(env.EXPECT_REQUESTS), 100));
  out.logRows = await page.$$eval('#request-log tbody tr[data-request-id]', (rows) => rows.length);
  out.misses = await page.$$eval('#request-log .badge.miss', (b) => b.map((e) => e.textContent));
  out.liveRows = await page.$$eval('#live-table tbody tr[data-backend]', (rows) =>
    rows.map((r) => ({ backend: r.dataset.backend, profile: r.dataset.profile, strategy: r.dataset.strategy,
      requests: Number(r.children[3].dataset.value),
      auto: r.querySelector('.auto')?.dataset.auto ?? '', autoText: r.querySelector('.auto')?.textContent ?? '' })));

  await page.waitForFunction((n) => document.getElementById('catalog-tools').dataset.value === n, env.EXPECT_TOOLS);
  out.catalogVersion = await page.getAttribute('#catalog-version', 'title');
  await page.fill('#tool-search', 'post a message to slack');
  await page.waitForSelector('#search-results li code');
  out.searchTop = await page.textContent('#search-results li code');
  await page.waitForSelector('#hit-chart polyline', { state: 'attached' });
  out.chartLines = await page.$$eval('#hit-chart polyline', (l) => l.length);

  await page.screenshot({ path: env.SCREENSHOT, fullPage: true });

  // Evict every thread from the page, as an operator would.
  page.once('dialog', (d) => { out.dialog = d.message(); d.accept(); });
  // From the keyboard: a click right after a full-page screenshot may land while the
  // viewport is still being restored.
  await page.focus('#evict-all');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('threads-message').textContent !== '');
  out.evicted = await page.textContent('#threads-message');
  await page.waitForFunction(() => document.getElementById('threads-count').dataset.value === '0');
  out.threadsAfter = Number(await value('threads-count'));
} catch (err) {
  out.failure = String(err && err.stack ? err.stack : err);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
