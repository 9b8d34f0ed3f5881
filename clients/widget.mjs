// The chat widget (package webui's /widget.js) in a real browser: Debian's headless chromium driven by
// playwright-core against servers the Go test starts (webui/widget_browser_test.go):
//   RAGPROXY_ASSISTANT_URL   the grounded server, in front of a fake model (its requests at RAGPROXY_FAKE_LOG_URL)
//   RAGPROXY_HOST_URL        a site's page carrying the widget, on an origin the server lists in its embed origins
//   RAGPROXY_OTHER_HOST_URL  the same page on an origin it does not list
//   RAGPROXY_WIDGET_KEY      the publishable key the page's tag carries
//   RAGPROXY_SCREENSHOT_DIR  where the screenshots go
//   WIDGET_ONLY              optional: a regexp, to run only the scenarios it matches
// Each scenario runs in its own browser context. Every failure is reported; the exit status is 1 if any scenario
// failed. One line "METRIC {...}" reports the time from a click on the launcher to the chat being ready.
import assert from 'node:assert/strict';
import path from 'node:path';
import { TIMEOUT, deadline, eventually as poll, launch, need as needEnv, scenarios } from './browser.mjs';

const need = (name) => needEnv('widget', 'webui/widget_browser_test.go', name);
const assistantURL = need('RAGPROXY_ASSISTANT_URL');
const hostURL = need('RAGPROXY_HOST_URL');
const otherURL = need('RAGPROXY_OTHER_HOST_URL');
const widgetKey = need('RAGPROXY_WIDGET_KEY');
const logURL = need('RAGPROXY_FAKE_LOG_URL');
const shotDir = need('RAGPROXY_SCREENSHOT_DIR');

const tuitionURL = 'https://www.lakeshore-poly.example/tuition/';
const question = 'how much is in-state tuition?';
const hostTitle = 'Tuition and Fees | Lakeshore';
// The page the widget is on: its query and fragment must not leave the page.
const pagePath = '/tuition/?session=s3cr3t#fees';

deadline('widget');

const eventually = (what, fn, ms = TIMEOUT) => poll(what, fn, ms, 50);

const browser = await launch('widget');

// open loads a host page in a new context, watching for what must not happen: requests to hosts other than the
// page's and the assistant's, dialogs, uncaught errors, and CSP violations in any frame.
async function open(url, options = {}) {
  const context = await browser.newContext({ colorScheme: 'light', viewport: { width: 1100, height: 800 }, ...options });
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT);
  const w = { context, page, foreign: [], chat: [], errors: [], console: [] };
  const allowed = [new URL(url).origin, assistantURL];
  page.on('request', (r) => {
    const u = r.url();
    if (!allowed.some((o) => u.startsWith(o + '/')) && !u.startsWith('data:')) w.foreign.push(u);
    if (u.endsWith('/v1/chat/completions') && r.method() === 'POST') w.chat.push(r);
  });
  page.on('pageerror', (e) => w.errors.push(`page error: ${e.message}`));
  page.on('console', (m) => w.console.push(m.text()));
  page.on('dialog', (d) => {
    w.errors.push(`dialog: ${d.message()}`);
    d.dismiss().catch(() => {});
  });
  await context.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
    // The host page's view of the widget's messages: when the chat said it is ready.
    if (window.top === window) {
      addEventListener('message', (e) => {
        if (e.data?.ragproxy === 'widget' && e.data.type === 'ready') window.__ready = performance.now();
      });
    }
  });
  await page.goto(url + pagePath);
  return w;
}

// The widget's parts, inside its shadow root (playwright's CSS selectors pierce open shadow roots).
const launcher = (page) => page.locator('ragproxy-widget .launch');
const panel = (page) => page.locator('ragproxy-widget .panel');
const chatFrame = (page) => page.frames().find((f) => f.url().startsWith(assistantURL + '/?embed=1'));
// focusInChat reports whether the keyboard focus is on the chat's question box, inside the frame.
async function focusInChat(page) {
  const frame = chatFrame(page);
  if (!frame) return false;
  const outer = await page.evaluate(() => {
    const w = document.querySelector('ragproxy-widget');
    return document.activeElement === w && w.shadowRoot.activeElement?.tagName === 'IFRAME';
  });
  return outer && (await frame.evaluate(() => document.hasFocus() && document.activeElement?.id === 'prompt'));
}
const focusOnLauncher = (page) => page.evaluate(() => {
  const w = document.querySelector('ragproxy-widget');
  return document.activeElement === w && w.shadowRoot.activeElement?.classList.contains('launch');
});

// openChat clicks the launcher (in the page, timed there) and waits until the question box has the focus; it
// returns the milliseconds from the click to the chat's ready message.
async function openChat(page) {
  await launcher(page).waitFor();
  await page.evaluate(() => {
    window.__ready = undefined;
    window.__clicked = performance.now();
    document.querySelector('ragproxy-widget').shadowRoot.querySelector('.launch').click();
  });
  await eventually('the chat to take the focus', () => focusInChat(page));
  return page.evaluate(() => (window.__ready ?? NaN) - window.__clicked);
}

// askInChat types a question with the keyboard (where the focus is) and returns the frame's newest answer once
// it ended.
async function askInChat(page, text) {
  const frame = chatFrame(page);
  const answers = frame.locator('.message.assistant');
  const before = await answers.count();
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
  await eventually('the answer to appear', async () => (await answers.count()) === before + 1);
  const m = answers.nth(before);
  await eventually('the answer to end', async () => /\b(done|stopped|error)\b/.test(await m.getAttribute('class')));
  return m;
}

async function clean(w, where) {
  assert.deepEqual(w.errors, [], `${where}: errors on the page`);
  assert.deepEqual(w.foreign, [], `${where}: requests to other hosts`);
  for (const f of w.page.frames()) {
    assert.deepEqual(await f.evaluate(() => window.__csp ?? []), [], `${where}: CSP violations in ${f.url()}`);
    assert.equal(await f.evaluate(() => window.__pwned), undefined, `${where}: a script ran in ${f.url()}`);
  }
}

const metrics = {};
const { scenario, report } = await scenarios('widget', shotDir, process.env.WIDGET_ONLY);

try {
  await scenario('listed site: open, streamed answer with sources, the page reaches the request, Esc', async (use) => {
    const w = use(await open(hostURL));
    const { page } = w;
    assert.equal(await launcher(page).getAttribute('aria-expanded'), 'false');
    assert.equal(await panel(page).isVisible(), false, 'the panel starts closed');
    assert.equal(chatFrame(page), undefined, 'the chat loads only when opened');
    const ready = [];
    ready.push(await openChat(page));
    assert.equal(await launcher(page).getAttribute('aria-expanded'), 'true');
    const frame = chatFrame(page);
    assert.equal(await frame.textContent('#greeting h2'), 'Questions about tuition?', 'the tag\'s greeting');
    assert.equal(await frame.evaluate(() => document.documentElement.lang), 'en-GB', 'the tag\'s language');
    assert.equal(await frame.isVisible('#key-form'), false, 'a visitor is never asked for a key');

    const m = await askInChat(page, question);
    assert.ok((await m.getAttribute('class')).includes('done'), 'the answer completes');
    assert.match(await m.locator('.answer').textContent(), /\$4,850/);
    const src = await m.locator('.sources a').evaluateAll((as) => as.map((a) => a.href));
    assert.deepEqual(src, [tuitionURL], 'the answer lists its source');

    const req = w.chat.at(-1);
    const res = await req.response();
    assert.match(res.headers()['content-type'], /^text\/event-stream/, 'the answer streams');
    const headers = await req.allHeaders();
    assert.equal(headers.authorization, `Bearer ${widgetKey}`, 'the publishable key is sent');
    assert.equal(headers['x-ragproxy-page'], `${hostURL}/tuition/`, 'the page goes without its query and fragment');
    assert.equal(decodeURIComponent(headers['x-ragproxy-page-title']), hostTitle);
    assert.equal(headers.origin, assistantURL, 'the chat page calls its own server');
    const log = await (await fetch(logURL)).json();
    const system = log.at(-1).find((t) => t.startsWith('system: ')) ?? '';
    assert.ok(system.includes(`The visitor is reading the page "${hostTitle}" (${hostURL}/tuition/)`),
      `the page reaches the model's prompt: ${system.slice(-300)}`);
    assert.ok(!JSON.stringify(log).includes('s3cr3t'), 'the page\'s query never leaves it');

    // Esc in the question box closes the widget and gives the focus back to the launcher.
    await page.keyboard.press('Escape');
    await eventually('the panel to close', async () => !(await panel(page).isVisible()));
    assert.equal(await launcher(page).getAttribute('aria-expanded'), 'false');
    assert.ok(await focusOnLauncher(page), 'the focus is back on the launcher');
    // Opened again: the conversation is still there and the focus goes into it.
    ready.push(await openChat(page));
    assert.equal(await frame.locator('.message.assistant').count(), 1, 'the conversation is kept');
    await panel(page).evaluate((p) => Promise.all(p.getAnimations().map((a) => a.finished)));
    await page.screenshot({ path: path.join(shotDir, 'widget-open.png') });
    await clean(w, 'listed site');
    metrics.click_to_ready_ms = Math.round(ready[0]);
  });

  await scenario('host CSS does not reach the widget, the widget leaves the page alone', async (use) => {
    const w = use(await open(hostURL));
    const { page } = w;
    await launcher(page).waitFor();
    const look = await launcher(page).evaluate((b) => {
      const s = getComputedStyle(b);
      return { bg: s.backgroundColor, color: s.color, font: s.fontFamily, spacing: s.letterSpacing, radius: s.borderRadius };
    });
    assert.equal(look.bg, 'rgb(10, 125, 59)', 'the tag\'s colour, not the page\'s button style');
    assert.equal(look.color, 'rgb(255, 255, 255)');
    assert.ok(!/comic|fantasy/i.test(look.font), `the page's font reached the widget: ${look.font}`);
    assert.equal(look.spacing, 'normal');
    assert.equal(look.radius, '24px');
    const hostEl = await page.evaluate(() => {
      const s = getComputedStyle(document.querySelector('ragproxy-widget'));
      return { display: s.display, opacity: s.opacity, position: s.position };
    });
    assert.deepEqual(hostEl, { display: 'block', opacity: '1', position: 'fixed' }, 'the page\'s !important rules on the widget lose');
    await openChat(page);
    const opened = await page.evaluate(() => {
      const root = document.querySelector('ragproxy-widget').shadowRoot;
      const p = getComputedStyle(root.querySelector('.panel'));
      const f = getComputedStyle(root.querySelector('iframe'));
      return { panel: p.display, border: p.borderTopWidth, frame: f.display, opacity: f.opacity };
    });
    assert.deepEqual(opened, { panel: 'flex', border: '0px', frame: 'block', opacity: '1' }, 'the page\'s rules on div and iframe');
    // The page: its own style sheet only, its elements as it styled them, one element added at the end of the body.
    const host = await page.evaluate(() => ({
      sheets: document.styleSheets.length,
      head: [...document.head.children].map((e) => e.tagName).join(' '),
      added: [...document.body.children].slice(-1)[0].tagName,
      children: document.body.children.length,
      color: getComputedStyle(document.getElementById('host-text')).color,
      button: getComputedStyle(document.getElementById('host-button')).backgroundColor,
      bodyStyle: document.body.getAttribute('style'),
    }));
    assert.deepEqual(host, { sheets: 1, head: 'META META TITLE STYLE', added: 'RAGPROXY-WIDGET', children: 5,
      color: 'rgb(255, 0, 0)', button: 'rgb(0, 255, 0)', bodyStyle: null });
    await clean(w, 'host CSS');
  });

  await scenario('a hostile answer stays inert inside the frame', async (use) => {
    const w = use(await open(hostURL));
    const { page } = w;
    await openChat(page);
    const m = await askInChat(page, 'show me something hostile');
    const answer = m.locator('.answer');
    assert.match(await answer.textContent(), /<script>window\.__pwned=1<\/script>/, 'raw HTML shows as text');
    assert.equal(await answer.locator('script, img, iframe').count(), 0, 'no script or image element');
    assert.equal(await answer.locator('a[href^="javascript:"], a[href^="data:"]').count(), 0, 'no script links');
    assert.equal(await page.evaluate(() => window.__pwned), undefined, 'nothing ran in the host page');
    await clean(w, 'hostile');
  });

  await scenario('keyboard only', async (use) => {
    const w = use(await open(hostURL));
    const { page } = w;
    await launcher(page).waitFor();
    // Tab from the top of the page: the page's own button, then the launcher.
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'host-button');
    await page.keyboard.press('Tab');
    assert.ok(await focusOnLauncher(page), 'Tab reaches the launcher');
    const names = await page.evaluate(() => {
      const root = document.querySelector('ragproxy-widget').shadowRoot;
      const dialog = root.querySelector('[role=dialog]');
      return { launcher: root.querySelector('.launch').textContent, popup: root.querySelector('.launch').getAttribute('aria-haspopup'),
        dialog: root.getElementById(dialog.getAttribute('aria-labelledby'))?.textContent,
        close: root.querySelector('.close').getAttribute('aria-label') };
    });
    assert.deepEqual(names, { launcher: 'Ask a question', popup: 'dialog', dialog: 'Lakeshore assistant', close: 'Close Lakeshore assistant' });
    await page.keyboard.press('Enter');
    await eventually('the chat to take the focus', () => focusInChat(page));
    const frameTitle = await page.evaluate(() => document.querySelector('ragproxy-widget').shadowRoot.querySelector('iframe').title);
    assert.equal(frameTitle, 'Lakeshore assistant: chat', 'the frame has a name for screen readers');
    const m = await askInChat(page, question);
    assert.ok((await m.getAttribute('class')).includes('done'));
    // Shift+Tab out of the frame's first control reaches the close button; Enter there closes.
    const frame = chatFrame(page);
    await frame.evaluate(() => document.querySelector('.skip').focus());
    await page.keyboard.press('Shift+Tab');
    const onClose = await page.evaluate(() => document.querySelector('ragproxy-widget').shadowRoot.activeElement?.className);
    assert.equal(onClose, 'close', 'Shift+Tab from the frame reaches the close button');
    await page.keyboard.press('Enter');
    await eventually('the panel to close', async () => !(await panel(page).isVisible()));
    assert.ok(await focusOnLauncher(page), 'the focus is back on the launcher');
    // Space opens it again; Esc on the close button closes it.
    await page.keyboard.press('Space');
    await eventually('the chat to take the focus again', () => focusInChat(page));
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Escape');
    await eventually('the panel to close', async () => !(await panel(page).isVisible()));
    assert.ok(await focusOnLauncher(page), 'the focus is back on the launcher');
    await clean(w, 'keyboard');
  });

  await scenario('phone: full screen, reduced motion honoured', async (use) => {
    const w = use(await open(hostURL, { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true,
      deviceScaleFactor: 2, reducedMotion: 'reduce' }));
    const { page } = w;
    await launcher(page).tap();
    await eventually('the chat to load', async () => chatFrame(page) && (await chatFrame(page).isVisible('#prompt')));
    const box = await panel(page).boundingBox();
    assert.deepEqual(box, { x: 0, y: 0, width: 390, height: 844 }, 'the panel fills the phone screen');
    assert.equal(await panel(page).evaluate((p) => getComputedStyle(p).animationName), 'none', 'no animation with reduced motion');
    const frame = chatFrame(page);
    await frame.fill('#prompt', question);
    await frame.click('#send');
    const m = frame.locator('.message.assistant');
    await eventually('the answer to end', async () => /\bdone\b/.test(await m.getAttribute('class')));
    assert.ok(await frame.evaluate(() => document.documentElement.scrollWidth <= innerWidth + 1), 'nothing overflows the frame');
    await page.screenshot({ path: path.join(shotDir, 'widget-phone.png') });
    await clean(w, 'phone');
  });

  await scenario('desktop: the panel animates without reduced motion', async (use) => {
    const w = use(await open(hostURL));
    const { page } = w;
    await openChat(page);
    assert.equal(await panel(page).evaluate((p) => getComputedStyle(p).animationName), 'in');
    const box = await panel(page).boundingBox();
    assert.ok(box.width === 400 && box.x + box.width === 1100 - 20, `a panel at the right: ${JSON.stringify(box)}`);
  });

  await scenario('a site not in the embed origins: no widget, and the frame is refused', async (use) => {
    const w = use(await open(otherURL));
    const { page } = w;
    await page.waitForLoadState('load'); // deferred scripts, the widget's among them, have run by now
    assert.equal(await page.locator('ragproxy-widget').count(), 0, 'no widget on another origin');
    assert.ok(w.console.some((t) => t.includes('not among the assistant\'s embed origins')), 'the widget says why');
    // Framing the chat page anyway, claiming to be the listed site: the browser refuses it (frame-ancestors).
    const listed = encodeURIComponent(hostURL);
    for (const src of [`${assistantURL}/?embed=1&host=${listed}`, `${assistantURL}/`]) {
      const refused = page.waitForEvent('console', { predicate: (m) => m.text().includes('frame-ancestors') });
      await page.evaluate((s) => {
        const f = document.createElement('iframe');
        f.src = s;
        document.body.append(f);
      }, src);
      await refused;
      for (const f of page.frames().filter((x) => x !== page.mainFrame())) {
        assert.equal(await f.evaluate(() => !!document.getElementById('prompt')).catch(() => false), false,
          `the chat page rendered in a frame of ${otherURL} (${f.url()})`);
      }
      await page.evaluate(() => document.querySelector('iframe').remove());
    }
    // And the API refuses the publishable key from this origin.
    const status = await page.evaluate(async ([url, key]) => {
      try {
        const res = await fetch(url + '/v1/chat/completions', { method: 'POST',
          headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
          body: JSON.stringify({ model: 'lakeshore', messages: [{ role: 'user', content: 'hi' }] }) });
        return res.status;
      } catch { return 'blocked'; }
    }, [assistantURL, widgetKey]);
    assert.equal(status, 'blocked', 'a page of another origin cannot read the API (no CORS for it)');
  });
} finally {
  await browser.close().catch(() => {});
}

console.log(`METRIC ${JSON.stringify(metrics)}`);
report();
