// The insights page (/admin/, package webui) in a real browser: Debian's headless chromium driven by
// playwright-core against a server the Go test starts (webui/admin_browser_test.go), whose question log already
// holds questions, feedback and gaps:
//   RAGPROXY_ADMIN_PAGE_URL    the server
//   RAGPROXY_ADMIN_KEY         its admin key
//   RAGPROXY_API_KEY           its client key (to ask the question an FAQ entry now answers)
//   RAGPROXY_GAP_QUESTION      a question asked twice that found no answer
//   RAGPROXY_EXPECT_QUESTIONS  how many questions the log holds
//   RAGPROXY_SCREENSHOT_DIR    where the screenshots go
// Each scenario runs in its own browser context (fresh storage); the exit status is 1 if any failed. The last one
// rates an answer on the chat page (its thumbs and comment) and finds the rating in the insights.
import assert from 'node:assert/strict';
import path from 'node:path';
import { TIMEOUT, deadline, eventually, launch, need as needEnv, scenarios } from './browser.mjs';

const need = (name) => needEnv('adminpage', 'webui/admin_browser_test.go', name);
const base = need('RAGPROXY_ADMIN_PAGE_URL');
const adminKey = need('RAGPROXY_ADMIN_KEY');
const apiKey = need('RAGPROXY_API_KEY');
const gap = need('RAGPROXY_GAP_QUESTION');
const expectQuestions = need('RAGPROXY_EXPECT_QUESTIONS');
const shotDir = need('RAGPROXY_SCREENSHOT_DIR');

deadline('adminpage');
const browser = await launch('adminpage');

// open loads the page in a new context, watching for page errors, dialogs, requests elsewhere and CSP
// violations.
async function open() {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT);
  const w = { context, page, errors: [], foreign: [] };
  page.on('pageerror', (e) => w.errors.push(`page error: ${e.message}`));
  page.on('dialog', (d) => { w.errors.push(`dialog: ${d.message()}`); d.dismiss().catch(() => {}); });
  page.on('request', (r) => { const u = r.url(); if (!u.startsWith(base) && !u.startsWith('data:')) w.foreign.push(u); });
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  const res = await page.goto(base + '/admin/');
  assert.equal(res.status(), 200);
  assert.match(res.headers()['content-security-policy'], /script-src 'self'/);
  return w;
}

async function clean(w, where) {
  assert.deepEqual(w.errors, [], `${where}: errors on the page`);
  assert.deepEqual(w.foreign, [], `${where}: requests to other hosts`);
  assert.deepEqual(await w.page.evaluate(() => window.__csp), [], `${where}: CSP violations`);
  assert.equal(await w.page.evaluate(() => window.__pwned), undefined, `${where}: a hostile comment ran`);
}

async function signIn(page, key) {
  await page.waitForSelector('#key-form:not([hidden])');
  await page.fill('#admin-key', key);
  await page.click('#save-key');
}

const total = (page, name) => page.locator(`dd[data-total="${name}"]`).textContent();

const { scenario, report } = await scenarios('adminpage', shotDir, process.env.ADMINPAGE_ONLY);
try {
  await scenario('a wrong key is refused, the right one shows the report', async (use) => {
    const w = use(await open());
    const { page } = w;
    await signIn(page, 'adm-wrong-key');
    await eventually('the refusal', async () => /refused/.test(await page.locator('#key-error').textContent()));
    assert.equal(await page.evaluate(() => sessionStorage.getItem('ragproxy-admin-key')), null, 'a refused key is not kept');
    await signIn(page, adminKey);
    await page.waitForSelector('#report:not([hidden])');
    assert.equal(await total(page, 'questions'), expectQuestions);
    assert.match(await total(page, 'thumbs up / down'), /^\d+ \/ 1$/);
    // The chart is the server's SVG, drawn as an image.
    await eventually('the chart to load', () => page.locator('#chart').evaluate((img) => img.complete && img.naturalWidth > 0));
    assert.match(await page.locator('#proposals').textContent(), new RegExp(gap));
    assert.match(await page.locator('#gaps').textContent(), new RegExp(gap));
    // The downvoted answer's comment is hostile markup, shown as text.
    const comment = await page.locator('#downvoted tbody td').nth(2).textContent();
    assert.match(comment, /<img src=x onerror=/);
    assert.equal(await page.locator('#downvoted img').count(), 0);
    assert.ok(Number(await page.locator('#questions tbody tr').count()) > 0, 'the questions list is empty');
    await page.screenshot({ path: path.join(shotDir, 'report.png'), fullPage: true });
    // The key stays for the tab: a reload shows the report at once.
    await page.reload();
    await page.waitForSelector('#report:not([hidden])');
    assert.equal(await page.locator('#key-form').isHidden(), true);
    await clean(w, 'report');
  });

  await scenario('a gap becomes an FAQ entry that answers at once', async (use) => {
    const w = use(await open());
    const { page } = w;
    await signIn(page, adminKey);
    await page.waitForSelector('#report:not([hidden])');
    await page.locator('#proposals button.promote').first().click();
    assert.equal(await page.inputValue('#faq-question'), gap);
    await page.fill('#faq-answer', 'The 22 bus runs hourly from the station.');
    await page.fill('#faq-url', 'https://www.lakeshore-poly.example/visit/');
    // A language that is no tag is refused with the API's message, and the form keeps what was written.
    await page.fill('#faq-lang', 'english');
    await page.click('#faq-add');
    await eventually('the refusal', async () => /^Not added: Invalid 'lang'/.test(await page.locator('#faq-status').textContent()));
    assert.equal(await page.inputValue('#faq-answer'), 'The 22 bus runs hourly from the station.');
    await page.fill('#faq-lang', 'en');
    await page.click('#faq-add');
    await eventually('the entry in the list', async () => (await page.locator('#faq tbody').textContent()).includes(gap));
    assert.equal(await page.locator('#faq tbody tr td:nth-child(4)').first().textContent(), 'en');
    assert.match(await page.locator('#faq-status').textContent(), /^Added/);
    const res = await fetch(base + '/v1/chat/completions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + apiKey },
      body: JSON.stringify({ model: 'lakeshore', messages: [{ role: 'user', content: gap }] }),
    });
    assert.equal(res.status, 200);
    const answer = (await res.json()).choices[0].message.content;
    assert.ok(answer.startsWith('The 22 bus runs hourly from the station.'), `the answer: ${answer}`);
    // Deleting it from the page removes it.
    await page.locator('#faq tbody button').first().click();
    await eventually('the entry gone', async () => !(await page.locator('#faq tbody').textContent()).includes(gap));
    await clean(w, 'faq');
  });

  await scenario('the chat page rates an answer, and the insights show it', async (use) => {
    const context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    use({ context, page });
    await page.addInitScript(() => {
      window.__csp = [];
      document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
    await page.goto(base + '/');
    await page.waitForSelector('#key-form:not([hidden])');
    await page.fill('#api-key', apiKey);
    await page.click('#save-key');
    await page.fill('#prompt', 'what is the late filing fee?');
    await page.click('#send');
    const m = page.locator('.message.assistant').last();
    await eventually('the answer to end', async () => /\bdone\b/.test(await m.getAttribute('class')));
    await m.locator('.rate.down').click();
    await m.locator('.feedback .comment input').fill('It should say the fee for late filing');
    await m.locator('.feedback .comment button').click();
    await eventually('the thanks', async () => (await m.locator('.feedback-note').textContent()) === 'Thanks for the feedback.');
    assert.equal(await m.locator('.rate.down').getAttribute('aria-pressed'), 'true');
    // The question log writes off the request path, in batches: the comment reaches the insights soon after the
    // thanks, not always before.
    let downvoted;
    await eventually('the comment in the insights', async () => {
      const res = await fetch(base + '/admin/insights', { headers: { Authorization: 'Bearer ' + adminKey } });
      downvoted = (await res.json()).downvoted;
      return downvoted.some((c) => c.comment === 'It should say the fee for late filing');
    }).catch((err) => assert.fail(`${err.message}: ${JSON.stringify(downvoted)}`));
    assert.deepEqual(errors, []);
    assert.deepEqual(await page.evaluate(() => window.__csp), []);
  });
} finally {
  await browser.close();
}
report();
