// What the browser checks share (chatpage.mjs, the chat page; widget.mjs, the widget on a host page): their
// settings from the environment, a deadline for the whole run, waiting for a condition, Debian's chromium, and
// named scenarios that report every failure with a screenshot.
import { access, constants, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
// TIMEOUT bounds any single wait on a page.
export const TIMEOUT = 15_000;

// need returns the environment variable name without a trailing slash, or ends the run: prog's Go test (goTest)
// sets it.
export function need(prog, goTest, name) {
  const v = process.env[name];
  if (!v) {
    console.error(`${prog}: set ${name} (the Go test ${goTest} does)`);
    process.exit(2);
  }
  return v.replace(/\/+$/, '');
}

// deadline ends a run of prog that takes longer than 4 minutes: a whole run must not hang the Go test, so it gives
// up well before the test's own timeout.
export function deadline(prog) {
  setTimeout(() => {
    console.error(`${prog}: FAIL: the run took longer than 4 minutes`);
    process.exit(1);
  }, 240_000).unref();
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// eventually polls fn every poll ms until it returns a truthy value, which it returns, or fails after ms.
export async function eventually(what, fn, ms = TIMEOUT, poll = 100) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) { last = err; }
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? `: ${last.message}` : ''}`);
    await sleep(poll);
  }
}

// launch starts Debian's chromium (never a browser build of playwright's own: it would be downloaded) on a new,
// empty temporary profile, removed on close, or ends the run of prog.
export async function launch(prog) {
  try {
    await access(CHROMIUM, constants.X_OK);
  } catch {
    console.error(`${prog}: FAIL: ${CHROMIUM} is missing (apt-get install chromium)`);
    process.exit(1);
  }
  try {
    return await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
    });
  } catch (err) {
    console.error(`${prog}: FAIL: cannot start chromium: ${err.message}`);
    process.exit(1);
  }
}

// scenarios runs named scenarios of prog, each with the page it opens (handed to use) closed after it and
// screenshotted into shotDir when it fails; only, when set, is a regexp of the names to run. report ends the
// run: it exits 1 when any scenario failed.
export async function scenarios(prog, shotDir, only) {
  await mkdir(shotDir, { recursive: true });
  const failures = [];
  const match = only ? new RegExp(only, 'i') : null;
  return {
    async scenario(name, fn) {
      if (match && !match.test(name)) return;
      const started = Date.now();
      let w;
      try {
        await fn((x) => { w = x; return x; });
        console.log(`ok   ${name} (${Date.now() - started} ms)`);
      } catch (err) {
        failures.push(name);
        console.log(`FAIL ${name}: ${err.stack}`);
        if (w) await w.page.screenshot({ path: path.join(shotDir, `failed-${name.replace(/\W+/g, '-')}.png`) }).catch(() => {});
      } finally {
        if (w) await w.context.close().catch(() => {});
      }
    },
    report() {
      if (failures.length) {
        console.error(`${prog}: FAIL: ${failures.length} scenario(s) failed: ${failures.join('; ')} (screenshots in ${shotDir})`);
        process.exit(1);
      }
      console.log(`${prog}: ok`);
    },
  };
}
