// What every client check shares: where the proxies are, and what a correctly cited answer looks like.
import assert from 'node:assert/strict';

// The test starts two proxies over the same site index: one in front of a (fake) model, one without a model.
export const online = process.env.RAGPROXY_ONLINE_URL;
export const offline = process.env.RAGPROXY_OFFLINE_URL;
export const apiKey = process.env.RAGPROXY_API_KEY ?? 'sk-local';
export const model = process.env.RAGPROXY_MODEL ?? 'ragproxy';
export const question = 'how much is in-state tuition?';

if (!online || !offline) {
  console.error('set RAGPROXY_ONLINE_URL and RAGPROXY_OFFLINE_URL (the Go test does)');
  process.exit(2);
}

// sourcesList returns the [title](url) links of the Sources list that ends an answer.
export function sourcesList(content) {
  const i = content.lastIndexOf('**Sources**');
  assert.ok(i >= 0, `answer has no Sources list: ${JSON.stringify(content)}`);
  return [...content.slice(i).matchAll(/^- (\[[^\]]*\]\((\S+)\))$/gm)].map((m) => ({ link: m[1], url: m[2] }));
}

// checkCitations asserts OpenAI's url_citation annotations of an answer: one per page of its Sources list, each
// spanning that page's link (indices count characters, that is code points), with the page's URL and title.
export function checkCitations(content, annotations, where) {
  const listed = sourcesList(content);
  assert.ok(Array.isArray(annotations), `${where}: no annotations`);
  assert.equal(annotations.length, listed.length, `${where}: ${annotations.length} annotations for ${listed.length} sources`);
  const chars = Array.from(content);
  annotations.forEach((a, i) => {
    assert.equal(a.type, 'url_citation', `${where}: annotation type`);
    const c = a.url_citation;
    assert.equal(typeof c, 'object', `${where}: url_citation`);
    for (const k of ['start_index', 'end_index']) assert.equal(typeof c[k], 'number', `${where}: ${k}`);
    for (const k of ['url', 'title']) assert.equal(typeof c[k], 'string', `${where}: ${k}`);
    assert.equal(c.url, listed[i].url, `${where}: annotation ${i} url`);
    assert.equal(chars.slice(c.start_index, c.end_index).join(''), listed[i].link, `${where}: annotation ${i} span`);
    assert.ok(listed[i].link.startsWith(`[${c.title}]`), `${where}: annotation ${i} title ${c.title}`);
  });
  return listed;
}
