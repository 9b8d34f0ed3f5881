// An offline answer's links in a real browser: Debian's headless chromium driven by playwright-core opens each
// link the Go test (grounding/browser_test.go) took from an answer and checks where the page is scrolled to.
//   RAGPROXY_SECTION_LINKS  JSON: [{name, url, at}], at the id of the element that must be in view, or "top"
//   RAGPROXY_SCREENSHOT_DIR where the screenshots of failures go
// Each link opens in its own browser context; every failure is reported and the exit status is 1 if any failed.
import assert from 'node:assert/strict';
import { TIMEOUT, deadline, eventually, launch, need as needEnv, scenarios, sleep } from './browser.mjs';

const need = (name) => needEnv('sectionlinks', 'grounding/browser_test.go', name);
const links = JSON.parse(process.env.RAGPROXY_SECTION_LINKS ?? '[]');
const shotDir = need('RAGPROXY_SCREENSHOT_DIR');
assert.ok(links.length > 0, 'RAGPROXY_SECTION_LINKS lists no links');

deadline('sectionlinks');
const browser = await launch('sectionlinks');
const { scenario, report } = await scenarios('sectionlinks', shotDir);

// inView reports whether the element with id is within the viewport's upper half, where a fragment puts it.
const inView = (page, id) => page.evaluate((id) => {
  const r = document.getElementById(id).getBoundingClientRect();
  return r.top >= -2 && r.top < innerHeight / 2;
}, id);

for (const link of links) {
  await scenario(link.name, async (use) => {
    const context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
    const page = await context.newPage();
    use({ context, page });
    page.setDefaultTimeout(TIMEOUT);
    // A browser-initiated navigation, as following a link typed or pasted is: text directives apply to it.
    await page.goto(link.url);
    if (link.at === 'top') {
      await sleep(500); // a scroll would have happened by now
      assert.equal(await page.evaluate(() => scrollY), 0, `${link.url} scrolled the page`);
      return;
    }
    await eventually(`#${link.at} in view after opening ${link.url}`, () => inView(page, link.at));
  });
}
await browser.close();
report();
