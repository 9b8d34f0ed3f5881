// The chat page (package webui) in a real browser: Debian's headless chromium driven by playwright-core against
// servers the Go test starts (webui/browser_test.go):
//   RAGPROXY_PAGE_URL          online, in front of a fake model (its requests at RAGPROXY_FAKE_LOG_URL)
//   RAGPROXY_OFFLINE_PAGE_URL  no model: extractive answers
//   RAGPROXY_AUTH_PAGE_URL     with client keys (the right one in RAGPROXY_API_KEY)
//   RAGPROXY_FAIL_PAGE_URL     whose upstream always fails with a 500 error body
//   RAGPROXY_RAW_PAGE_URL      a plain gateway, so hostile answers reach the page unfiltered
//   RAGPROXY_SCREENSHOT_DIR    where the screenshots go
//   CHATPAGE_ONLY              optional: a regexp, to run only the scenarios it matches
// Each scenario runs in its own browser context (fresh storage). Every failure is reported; the exit status is 1
// if any scenario failed. One line "METRIC {...}" reports how long a streamed token takes to be painted.
import assert from 'node:assert/strict';
import path from 'node:path';
import { TIMEOUT, deadline, eventually, launch, need as needEnv, scenarios, sleep } from './browser.mjs';

const need = (name) => needEnv('chatpage', 'webui/browser_test.go', name);
const onlineURL = need('RAGPROXY_PAGE_URL');
const offlineURL = need('RAGPROXY_OFFLINE_PAGE_URL');
const authURL = need('RAGPROXY_AUTH_PAGE_URL');
const apiKey = need('RAGPROXY_API_KEY');
const failURL = need('RAGPROXY_FAIL_PAGE_URL');
const logURL = need('RAGPROXY_FAKE_LOG_URL');
const shotDir = need('RAGPROXY_SCREENSHOT_DIR');
const rawURL = need('RAGPROXY_RAW_PAGE_URL');

const tuitionURL = 'https://www.lakeshore-poly.example/tuition/';
const question = 'how much is in-state tuition?';

deadline('chatpage');

async function fakeLog() {
  const res = await fetch(logURL);
  assert.equal(res.status, 200, `GET ${logURL}`);
  return (await res.json()).map((e) => ({
    path: e.path,
    canceled: e.canceled ?? false,
    messages: (e.messages ?? []).map((m) => ({ role: m.role, content: String(m.content ?? '') })),
  }));
}
const lastUser = (entry) => [...entry.messages].reverse().find((m) => m.role === 'user')?.content ?? '';

// ---- the browser ----
// launch starts chromium on a new, empty temporary profile (removed on close); each context has its own storage.
const browser = await launch('chatpage');

// open starts a context and loads a page, watching what a hostile answer could try: requests to other hosts,
// CSP violations, dialogs, uncaught errors.
async function open(url, { before, ...options } = {}) {
  const context = await browser.newContext({ colorScheme: 'light', viewport: { width: 1100, height: 800 }, ...options });
  const page = await context.newPage();
  if (before) await before(page);
  page.setDefaultTimeout(TIMEOUT);
  const w = { context, page, foreign: [], chat: [], errors: [] };
  const origin = new URL(url).origin;
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(origin) && !u.startsWith('data:')) w.foreign.push(u);
    if (u.endsWith('/v1/chat/completions') && r.method() === 'POST') w.chat.push(r);
  });
  page.on('pageerror', (e) => w.errors.push(`page error: ${e.message}`));
  page.on('dialog', (d) => {
    w.errors.push(`dialog: ${d.message()}`);
    d.dismiss().catch(() => {});
  });
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await page.goto(url + '/');
  await page.waitForFunction(() => window.marked && window.DOMPurify);
  return w;
}

// clean asserts that nothing hostile happened on the page.
async function clean(w, where) {
  assert.deepEqual(w.errors, [], `${where}: errors on the page`);
  assert.deepEqual(w.foreign, [], `${where}: requests to other hosts`);
  assert.deepEqual(await w.page.evaluate(() => window.__csp), [], `${where}: CSP violations (the page tried something it must not)`);
}

// ask sends a question with the Send button and returns the new answer's locator, by default once it ended.
async function ask(w, text, { wait = true } = {}) {
  const { page } = w;
  const answers = page.locator('.message.assistant');
  const before = await answers.count();
  await page.fill('#prompt', text);
  await page.click('#send');
  await eventually('the answer to appear', async () => (await answers.count()) === before + 1);
  const m = answers.nth(before);
  if (wait) await ended(m);
  return m;
}
async function ended(m, ms = TIMEOUT) {
  await eventually('the answer to end (class done, stopped or error)', async () =>
    /\b(done|stopped|error)\b/.test(await m.getAttribute('class')), ms);
  return (await m.getAttribute('class')).split(/\s+/);
}
async function sources(m) {
  return m.locator('.sources a').evaluateAll((as) => as.map((a) => ({ title: a.textContent, href: a.href, target: a.target, rel: a.rel })));
}
// watchClasses records every class an answer takes, so a fast stream's "streaming" is not missed.
async function watchClasses(page) {
  await page.evaluate(() => {
    window.__classes = [];
    const seen = (el) => el.matches?.('.message.assistant') && window.__classes.push(el.className);
    new MutationObserver((records) => {
      for (const r of records) {
        if (r.type === 'attributes') seen(r.target);
        else r.addedNodes.forEach(seen);
      }
    }).observe(document.getElementById('messages'), { childList: true, subtree: true, attributes: true, attributeFilter: ['class'] });
  });
}

// ---- the scenarios ----
// CHATPAGE_ONLY=regexp runs only the scenarios whose names match (while working on the page).
const { scenario, report } = await scenarios('chatpage', shotDir, process.env.CHATPAGE_ONLY);

try {
  await scenario('online: answer, sources, history, new chat, copy', async (use) => {
    const w = use(await open(onlineURL, { permissions: ['clipboard-read', 'clipboard-write'] }));
    const { page } = w;
    const site = await page.getAttribute('body', 'data-site');
    assert.ok(site, 'body has data-site');
    assert.ok((await page.textContent('#greeting')).includes(site), 'the greeting names the site');
    const models = (await (await fetch(onlineURL + '/v1/models')).json()).data;
    if (models.length < 2) assert.equal(await page.isVisible('#model'), false, 'no model picker for a single model');
    else assert.equal(await page.inputValue('#model'), await page.getAttribute('body', 'data-model'), 'the picker selects data-model');

    // 1. A streamed, cited answer.
    await watchClasses(page);
    const m = await ask(w, question);
    const classes = await page.evaluate(() => window.__classes);
    assert.ok(classes.some((c) => /\bstreaming\b/.test(c)), `the answer never had class streaming: ${JSON.stringify(classes)}`);
    assert.ok((await m.getAttribute('class')).split(' ').includes('done'), 'the answer ends with class done');
    const text = await m.locator('.answer').textContent();
    assert.match(text, /\$4,850/, 'the answer text');
    assert.doesNotMatch(text, /Sources/, 'the markdown Sources list is hidden from the answer (shown as links instead)');
    const src = await sources(m);
    const tuition = src.find((s) => s.href === tuitionURL);
    assert.ok(tuition, `no source link to ${tuitionURL}: ${JSON.stringify(src)}`);
    assert.equal(tuition.title, 'Tuition and Fees', 'the source link shows the page title');
    for (const s of src) {
      assert.equal(s.target, '_blank', `source ${s.href} opens in a new tab`);
      assert.deepEqual(s.rel.split(' ').sort(), ['noopener', 'noreferrer'], `source ${s.href} rel`);
    }
    const inline = await m.locator('.answer a').evaluateAll((as) => as.map((a) => [a.href, a.target, a.rel]));
    assert.deepEqual(inline, [[tuitionURL, '_blank', 'noopener noreferrer']], 'links inside the answer open in a new tab');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'prompt', 'focus is back in the question box');
    await page.screenshot({ path: path.join(shotDir, 'answer-light.png'), fullPage: true });

    // Copy puts the raw answer (Sources list included) on the clipboard.
    await m.locator('.copy').click();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.match(copied, /\$4,850[\s\S]*\*\*Sources\*\*/, 'the copied text is the raw answer');

    // 2. A follow-up sends the whole conversation, the answer as received.
    await ask(w, 'and for out-of-state students?');
    const sent = JSON.parse(w.chat.at(-1).postData()).messages;
    assert.deepEqual(sent.map((x) => x.role), ['user', 'assistant', 'user'], 'the follow-up request carries the history');
    assert.equal(sent[0].content, question);
    assert.match(sent[1].content, /\$4,850[\s\S]*\*\*Sources\*\*/, 'the history keeps the answer as received');
    const log = await fakeLog();
    const follow = log.filter((e) => e.messages.some((x) => x.content.includes('out-of-state'))).at(-1);
    assert.ok(follow, 'the fake model received the follow-up');
    assert.ok(follow.messages.some((x) => x.role === 'user' && x.content.includes('in-state tuition')), 'upstream history: the first question');
    assert.ok(follow.messages.some((x) => x.role === 'assistant' && x.content.includes('$4,850')), 'upstream history: the first answer');

    // 3. New chat clears the conversation, on screen and in what is sent next.
    await page.click('#new-chat');
    assert.equal(await page.locator('#messages .message').count(), 0, 'New chat clears the messages');
    assert.equal(await page.isVisible('#greeting'), true, 'the greeting is back');
    await ask(w, question);
    assert.equal(JSON.parse(w.chat.at(-1).postData()).messages.length, 1, 'after New chat only the new question is sent');
    await clean(w, 'online');
  });

  await scenario('online: stop a streaming answer, paint latency', async (use) => {
    const w = use(await open(onlineURL));
    const { page, context } = w;
    // The network side: when each piece of the answer's body reached the browser (CDP's clock, converted to
    // wall-clock time with the request's wallTime).
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    const arrivals = [];
    let chatId = null;
    let offset = 0;
    cdp.on('Network.requestWillBeSent', (e) => {
      if (e.request.method === 'POST' && e.request.url.endsWith('/v1/chat/completions')) {
        chatId = e.requestId;
        offset = e.wallTime * 1000 - e.timestamp * 1000;
      }
    });
    cdp.on('Network.dataReceived', (e) => {
      if (e.requestId === chatId && e.dataLength > 0) arrivals.push(e.timestamp * 1000 + offset);
    });
    // The page side: when the answer's text grew, and the next frame after it (by then it was painted).
    await page.evaluate(() => {
      window.__paints = [];
      let shown = 0;
      new MutationObserver(() => {
        const a = [...document.querySelectorAll('.message.assistant .answer')].pop();
        const n = a ? a.textContent.length : 0;
        if (n <= shown) return;
        shown = n;
        const grew = performance.timeOrigin + performance.now();
        requestAnimationFrame(() => window.__paints.push({ grew, painted: performance.timeOrigin + performance.now() }));
      }).observe(document.getElementById('messages'), { childList: true, subtree: true, characterData: true });
    });

    const m = await ask(w, 'a slow question please', { wait: false });
    assert.match(await m.getAttribute('class'), /\bstreaming\b/, 'the answer streams');
    assert.equal(await page.isVisible('#stop'), true, 'Stop is shown while streaming');
    const words = async () => ((await m.locator('.answer').textContent()).match(/word\d/g) || []).length;
    await eventually('40 words of the slow answer', async () => (await words()) >= 40);
    await page.click('#stop');
    assert.ok((await ended(m, 5000)).includes('stopped'), 'the answer gets class stopped');
    const kept = await words();
    assert.ok(kept >= 40 && kept < 200, `the partial answer is kept (${kept} words)`);
    await sleep(800);
    assert.equal(await words(), kept, 'the answer stops growing after Stop');
    assert.equal(await page.isVisible('#stop'), false, 'Stop is hidden again');
    assert.equal(await page.isVisible('#send'), true, 'Send is back');
    const canceled = await eventually('the fake log to show the slow request canceled', async () => {
      const e = (await fakeLog()).filter((x) => lastUser(x).includes('slow')).at(-1);
      return e?.canceled;
    }, 5000);
    assert.ok(canceled);

    // 11. Paint latency: for each piece of body, the first paint of a DOM change made after it arrived.
    const paints = await page.evaluate(() => window.__paints);
    const delays = [];
    for (const t of arrivals) {
      const p = paints.find((x) => x.grew >= t);
      if (p) delays.push(p.painted - t);
    }
    assert.ok(delays.length >= 10, `too few samples to measure paint latency (${delays.length} of ${arrivals.length} chunks)`);
    delays.sort((a, b) => a - b);
    const q = (f) => Math.round(delays[Math.min(delays.length - 1, Math.floor(f * delays.length))] * 10) / 10;
    console.log(`paint latency over ${delays.length} chunks: median ${q(0.5)} ms, p90 ${q(0.9)} ms, max ${q(1)} ms`);
    console.log(`METRIC ${JSON.stringify({ first_token_paint_ms: q(0.5) })}`);
    await clean(w, 'stop');
  });

  await scenario('theme toggle, remembered across a reload', async (use) => {
    const w = use(await open(onlineURL));
    const { page } = w;
    const theme = () => page.evaluate(() => document.documentElement.dataset.theme ?? null);
    const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(await theme(), null, 'no data-theme until the toggle is used (the system theme applies)');
    const light = await bg();
    await page.click('#theme');
    assert.equal(await theme(), 'dark', 'the toggle switches a light system theme to dark');
    assert.notEqual(await bg(), light, 'the dark theme changes the colours');
    assert.equal(await page.getAttribute('#theme', 'aria-pressed'), 'true');
    await ask(w, question);
    await page.screenshot({ path: path.join(shotDir, 'answer-dark.png'), fullPage: true });
    await page.reload();
    await page.waitForFunction(() => window.marked);
    assert.equal(await theme(), 'dark', 'the theme survives a reload');
    await page.click('#theme');
    assert.equal(await theme(), 'light', 'the toggle switches back');
    // A dark system theme applies by itself.
    const d = use(await open(onlineURL, { colorScheme: 'dark' }));
    await w.context.close();
    assert.notEqual(await d.page.evaluate(() => getComputedStyle(document.body).backgroundColor), light, 'prefers-color-scheme: dark');
  });

  await scenario('keyboard: Enter sends, Shift+Enter is a newline, focus is visible', async (use) => {
    const w = use(await open(onlineURL));
    const { page } = w;
    await page.focus('#prompt');
    await page.keyboard.type('first line');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('second line');
    assert.equal(await page.inputValue('#prompt'), 'first line\nsecond line', 'Shift+Enter inserts a newline');
    assert.equal(await page.locator('.message').count(), 0, 'Shift+Enter does not send');
    await page.keyboard.press('Enter');
    const user = page.locator('.message.user .text').first();
    await user.waitFor();
    assert.equal(await user.textContent(), 'first line\nsecond line', 'Enter sends the question as typed');
    assert.equal(await page.inputValue('#prompt'), '', 'the question box is emptied');
    await ended(page.locator('.message.assistant').first());
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'prompt', 'focus stays in the question box');
    // Tab reaches the buttons, and the focused one shows a focus ring.
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => {
      const e = document.activeElement;
      const s = getComputedStyle(e);
      return { tag: e.tagName, outline: s.outlineStyle, width: parseFloat(s.outlineWidth) };
    });
    assert.equal(focused.tag, 'BUTTON', 'Tab from the question box reaches a button');
    assert.ok(focused.outline !== 'none' && focused.width > 0, `focus is visible: ${JSON.stringify(focused)}`);
    for (const id of ['send', 'new-chat', 'theme']) {
      assert.equal(await page.evaluate((i) => document.getElementById(i).tagName, id), 'BUTTON', `#${id} is a button`);
    }
    assert.equal(await page.getAttribute('#messages', 'aria-live'), 'polite');
    await clean(w, 'keyboard');
  });

  const hostile = async (url, where, use) => {
    const w = use(await open(url));
    const { page } = w;
    const m = await ask(w, 'a hostile question');
    assert.ok((await m.getAttribute('class')).includes('done'), 'the hostile answer completes');
    await sleep(300); // give anything that would run or load the time to do it
    assert.equal(await page.evaluate(() => window.__pwned), undefined, 'window.__pwned stays undefined');
    const found = await page.evaluate(() => {
      const root = document.getElementById('messages');
      return {
        active: [...root.querySelectorAll('script, img, iframe, object, embed, style, form, svg, [onerror], [onload], [style]')].map((e) => e.outerHTML),
        hrefs: [...root.querySelectorAll('[href]')].map((e) => e.getAttribute('href')),
      };
    });
    assert.deepEqual(found.active, [], `${where}: active elements in the answer`);
    for (const h of found.hrefs) assert.match(h, /^(https?:|mailto:)/i, `${where}: only http(s) and mailto links survive`);
    assert.ok(!w.foreign.some((u) => u.includes('evil.example')), `${where}: a request went to evil.example: ${w.foreign}`);
    await page.screenshot({ path: path.join(shotDir, `hostile-${where}.png`) });
    await clean(w, where);
  };
  await scenario('hostile answer (grounded)', (use) => hostile(onlineURL, 'online', use));
  await scenario('hostile answer (unfiltered gateway)', (use) => hostile(rawURL, 'raw', use));

  await scenario('upstream failure shows the error body', async (use) => {
    const res = await fetch(failURL + '/v1/chat/completions', {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: question }] }),
    });
    const want = (await res.json())?.error?.message;
    assert.ok(res.status >= 400 && want, `the failing server answers an error body (status ${res.status})`);
    const w = use(await open(failURL));
    const m = await ask(w, question);
    assert.ok((await m.getAttribute('class')).includes('error'), 'the answer gets class error');
    assert.match(await m.textContent(), new RegExp(want.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'it shows error.message');
    // The failed turn is not sent again as history.
    await ask(w, 'another question');
    assert.equal(JSON.parse(w.chat.at(-1).postData()).messages.length, 1, 'a failed turn is dropped from the history');
    await clean(w, 'fail');
  });

  await scenario('stream errors, network errors and markdown (routed responses)', async (use) => {
    const w = use(await open(onlineURL));
    const { page } = w;
    const sse = (...frames) => frames.map((f) => `data: ${typeof f === 'string' ? f : JSON.stringify(f)}\n\n`).join('');
    const delta = (content, extra = {}) => ({ choices: [{ index: 0, delta: { content, ...extra }, finish_reason: null }] });
    let reply;
    await page.route('**/v1/chat/completions', (route) => reply(route));

    // An error frame after some text: the text stays, the message from the frame is shown.
    reply = (r) => r.fulfill({ status: 200, contentType: 'text/event-stream',
      body: sse(delta('Partial '), { error: { message: 'Upstream went away mid-answer.', type: 'server_error' } }) });
    let m = await ask(w, 'q1');
    assert.ok((await m.getAttribute('class')).includes('error'), 'an error frame ends the answer with class error');
    assert.match(await m.textContent(), /Partial[\s\S]*Upstream went away mid-answer\./, 'error frame message and partial text');

    // A network failure.
    reply = (r) => r.abort('connectionreset');
    m = await ask(w, 'q2');
    assert.ok((await m.getAttribute('class')).includes('error'), 'a network error gives class error');
    assert.match(await m.textContent(), /network/i, 'a network error is explained');

    // Markdown, Open WebUI source events (no choices) and pings are handled; without annotations the Sources
    // list is parsed from the text.
    const md = '## Fees\n\n- one\n- two\n\n| a | b |\n| --- | ---: |\n| 1 | 2 |\n\n```js\nlet x = 1 < 2;\n```\n\n' +
      'See [the site](https://www.lakeshore-poly.example/) or [mail](mailto:info@lakeshore-poly.example).' +
      '\n\n**Sources**\n- [Tuition and Fees](https://www.lakeshore-poly.example/tuition/)\n';
    reply = (r) => r.fulfill({ status: 200, contentType: 'text/event-stream',
      body: ': ping\n\n' + sse({ choices: [], event: { type: 'source', data: {} } }, ...md.match(/[\s\S]{1,7}/g).map((c) => delta(c)),
        { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }, '[DONE]') });
    m = await ask(w, 'q3');
    assert.ok((await m.getAttribute('class')).includes('done'), 'the markdown answer completes');
    const shape = await m.locator('.answer').evaluate((a) => ({
      h2: a.querySelectorAll('h2').length, li: a.querySelectorAll('ul > li').length, td: a.querySelectorAll('table td').length,
      code: a.querySelector('pre code')?.textContent, lang: a.querySelector('pre code')?.className,
      align: getComputedStyle(a.querySelector('td:last-child')).textAlign, links: [...a.querySelectorAll('a')].map((x) => [x.getAttribute('href'), x.target]),
      text: a.textContent,
    }));
    assert.deepEqual([shape.h2, shape.li, shape.td], [1, 2, 2], `headings, lists and tables render: ${JSON.stringify(shape)}`);
    assert.equal(shape.code, 'let x = 1 < 2;\n', 'code blocks render as text');
    assert.equal(shape.lang, 'language-js', 'code blocks keep their language class');
    assert.equal(shape.align, 'right', 'table column alignment survives sanitising');
    assert.deepEqual(shape.links, [['https://www.lakeshore-poly.example/', '_blank'], ['mailto:info@lakeshore-poly.example', '']], 'links');
    assert.doesNotMatch(shape.text, /Sources/, 'the parsed Sources list is not repeated in the text');
    assert.deepEqual((await sources(m)).map((s) => [s.title, s.href]), [['Tuition and Fees', tuitionURL]], 'sources parsed from the list');
    await clean(w, 'routed');
  });

  await scenario('model picker when /v1/models lists several (routed)', async (use) => {
    const w = use(await open(onlineURL, {
      before: (page) => page.route('**/v1/models', (r) => r.fulfill({ json: { object: 'list', data: [{ id: 'other-model' }, { id: 'lakeshore' }] } })),
    }));
    const { page } = w;
    await page.locator('#model').waitFor();
    assert.deepEqual(await page.$$eval('#model option', (os) => os.map((o) => o.value)), ['other-model', 'lakeshore'], 'the models offered');
    assert.equal(await page.inputValue('#model'), await page.getAttribute('body', 'data-model'), 'data-model is selected by default');
    await page.selectOption('#model', 'other-model');
    await page.route('**/v1/chat/completions', (r) => r.fulfill({ status: 200, contentType: 'text/event-stream',
      body: 'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n' }));
    await ask(w, 'which model?');
    assert.equal(JSON.parse(w.chat.at(-1).postData()).model, 'other-model', 'the chosen model is asked');
    await clean(w, 'models');
  });

  await scenario('offline answer with sources', async (use) => {
    const w = use(await open(offlineURL));
    const m = await ask(w, question);
    assert.ok((await m.getAttribute('class')).includes('done'), 'the offline answer completes');
    assert.match(await m.locator('.answer').textContent(), /No language model is configured/);
    const src = await sources(m);
    assert.ok(src.length > 0 && src.every((s) => /^https?:/.test(s.href) && s.title), `source links: ${JSON.stringify(src)}`);
    await clean(w, 'offline');
  });

  await scenario('labels in the browser language', async (use) => {
    const w = use(await open(offlineURL, { locale: 'de-DE' }));
    const { page } = w;
    assert.equal(await page.locator('#send').textContent(), 'Senden', 'the Send button in German');
    assert.equal(await page.locator('#new-chat').textContent(), 'Neuer Chat');
    assert.equal(await page.locator('#prompt').getAttribute('placeholder'), 'Stellen Sie eine Frage…');
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'de-DE');
    const m = await ask(w, question);
    assert.equal(await m.locator('nav.sources h3').textContent(), 'Quellen', 'the Sources heading in German');
    await clean(w, 'German labels');
  });

  await scenario('right-to-left questions and answers', async (use) => {
    const w = use(await open(offlineURL));
    const { page } = w;
    assert.equal(await page.getAttribute('#prompt', 'dir'), 'auto', 'the question box takes the direction of what is typed');
    const m = await ask(w, 'ما هي رسوم الدراسة؟');
    const direction = (sel) => page.locator(sel).last().evaluate((n) => getComputedStyle(n).direction);
    assert.equal(await direction('.message.user p.text'), 'rtl', 'an Arabic question reads right to left');
    // Each block of an answer takes the direction of its own text; ragproxy answers an Arabic visitor with its own
    // texts in Arabic, around the English site's quotes.
    const first = (a) => a.locator('.answer > *').first();
    assert.equal(await first(m).getAttribute('dir'), 'auto', 'an answer\'s blocks take the direction of their own text');
    assert.equal(await first(m).evaluate((n) => getComputedStyle(n).direction), 'rtl', 'the answer to an Arabic question opens in Arabic');
    assert.equal(await page.evaluate(() => document.documentElement.dir), '', 'an English page stays left to right');
    const en = await ask(w, question);
    assert.equal(await first(en).evaluate((n) => getComputedStyle(n).direction), 'ltr', 'an English answer stays left to right');
    await clean(w, 'right to left');
  });

  await scenario('labels in a right-to-left browser language', async (use) => {
    const w = use(await open(offlineURL, { locale: 'fa-IR' }));
    const { page } = w;
    assert.equal(await page.locator('#send').textContent(), 'ارسال', 'the Send button in Persian');
    assert.equal(await page.evaluate(() => document.documentElement.dir), 'rtl', 'the page reads right to left');
    assert.equal(await page.locator('#messages').evaluate((n) => getComputedStyle(n).direction), 'rtl');
    const m = await ask(w, 'شهریه in-state tuition برای دانشجویان چقدر است؟');
    assert.equal(await m.locator('nav.sources h3').textContent(), 'منابع', 'the Sources heading in Persian');
    const dirs = await m.locator('.answer blockquote').evaluateAll((qs) => qs.map((q) => getComputedStyle(q).direction));
    assert.ok(dirs.length > 0 && dirs.every((d) => d === 'ltr'), `the English quotes of the site read left to right: ${dirs}`);
    assert.equal(await m.locator('.answer > p').first().evaluate((n) => getComputedStyle(n).direction), 'rtl', 'ragproxy\'s Persian line reads right to left');
    const fits = await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth + 1);
    assert.ok(fits, 'nothing overflows the page horizontally when it reads right to left');
    await page.screenshot({ path: path.join(shotDir, 'persian.png') });
    await clean(w, 'Persian labels');
  });

  await scenario('phone layout', async (use) => {
    const w = use(await open(offlineURL, { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 }));
    const { page } = w;
    await ask(w, question);
    const fits = await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth + 1);
    assert.ok(fits, 'nothing overflows the phone screen horizontally');
    assert.equal(await page.isVisible('#prompt'), true);
    await page.screenshot({ path: path.join(shotDir, 'phone.png') });
  });

  await scenario('API key form', async (use) => {
    const w = use(await open(authURL));
    const { page } = w;
    assert.equal(await page.getAttribute('body', 'data-auth'), 'required');
    await page.locator('#api-key').waitFor();
    assert.equal(await page.isVisible('#api-key'), true, 'the key form is shown');
    await page.screenshot({ path: path.join(shotDir, 'key-form.png') });
    // A wrong key is refused with the server's message.
    await page.fill('#api-key', 'sk-wrong-key');
    await page.click('#save-key');
    await eventually('the key error', async () => (await page.textContent('#key-error')).trim().length > 0);
    assert.equal(await page.isVisible('#api-key'), true, 'the form stays after a wrong key');
    assert.equal(await page.evaluate(() => Object.keys(sessionStorage).length), 0, 'a refused key is not kept');
    // The right one is kept for the tab and sent as a bearer token.
    await page.fill('#api-key', apiKey);
    await page.click('#save-key');
    await eventually('the key form to close', async () => !(await page.isVisible('#key-form')));
    const m = await ask(w, question);
    assert.ok((await m.getAttribute('class')).includes('done'), 'an answer with the right key');
    assert.match(await m.locator('.answer').textContent(), /No language model is configured/);
    assert.equal(await w.chat.at(-1).headerValue('authorization'), `Bearer ${apiKey}`, 'the key is sent as a bearer token');
    assert.ok(await page.evaluate((k) => Object.values(sessionStorage).includes(k), apiKey), 'the key is in sessionStorage');
    assert.equal(await page.evaluate((k) => Object.values(localStorage).includes(k), apiKey), false, 'not in localStorage');
    assert.ok(!page.url().includes(apiKey) && !w.chat.some((r) => r.url().includes(apiKey)), 'the key is never in a URL');
    // A key that stops working: the answer shows the 401 and the form asks again.
    await page.evaluate(() => { for (const k of Object.keys(sessionStorage)) sessionStorage.setItem(k, 'sk-revoked'); });
    const bad = await ask(w, question);
    assert.ok((await bad.getAttribute('class')).includes('error'), 'a 401 answer gets class error');
    await eventually('the key form to ask again', () => page.isVisible('#api-key'));
    assert.ok((await page.textContent('#key-error')).trim(), 'the form says why');
    await clean(w, 'auth');
  });
} finally {
  await browser.close().catch(() => {});
}

report();
