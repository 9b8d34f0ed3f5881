// ragproxy's streams read the ways Open WebUI reads them (Open WebUI is Python and Svelte and is not installed
// here; this follows its published behaviour):
//   - its backend's stream handler, line by line: each "data:" line is JSON; a top-level "event" object goes to
//     the chat as is ({type, data}); frames without choices are skipped; delta.annotations of type url_citation
//     become citations, and one malformed annotation drops its whole chunk, content included;
//   - its frontend's SSE reader, eventsource-parser 1.1.2 behind TextDecoderStream, where a top-level "sources"
//     field replaces the message's sources (so a stream never carries one: entries of another shape break
//     Open WebUI 0.6-0.8's citation rendering);
//   - a non-stream answer's top-level "sources", which the frontend copies into the message (Open WebUI reads
//     message.annotations in streams only): ragproxy sends it to Open WebUI's requests alone, in Open WebUI's
//     own shape, the data of its source events.
import assert from 'node:assert/strict';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { online, offline, apiKey, model, question, checkCitations } from './common.mjs';

async function post(baseURL, body, headers = {}) {
  const res = await fetch(`${baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${apiKey}`, ...headers },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200, `status ${res.status}`);
  return res;
}

// backendRead handles a stream line by line as Open WebUI's backend does, and returns what the chat gets.
async function backendRead(res, where) {
  const raw = await res.text();
  let content = '';
  const citations = [];
  const events = [];
  for (const line of raw.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const data = line.slice(5).trim();
    if (data === '[DONE]') continue;
    const chunk = JSON.parse(data); // a frame split over lines would fail here
    assert.equal(chunk.sources, undefined, `${where}: a frame has a top-level sources field`);
    if (chunk.event) {
      assert.equal(typeof chunk.event.type, 'string', `${where}: event type`);
      assert.equal(typeof chunk.event.data, 'object', `${where}: event data`);
      events.push(chunk.event);
    }
    const choices = chunk.choices;
    if (!Array.isArray(choices) || choices.length === 0) continue;
    const delta = choices[0].delta;
    assert.equal(typeof delta, 'object', `${where}: delta`);
    if (delta.annotations !== undefined) {
      assert.ok(Array.isArray(delta.annotations), `${where}: annotations must be a list`);
      for (const a of delta.annotations) {
        assert.ok(a && typeof a === 'object' && a.type === 'url_citation', `${where}: annotation ${JSON.stringify(a)}`);
        assert.ok(a.url_citation && typeof a.url_citation === 'object', `${where}: url_citation ${JSON.stringify(a)}`);
        citations.push({ name: a.url_citation.title || a.url_citation.url, url: a.url_citation.url, annotation: a });
      }
    }
    content += delta.content ?? '';
  }
  return { content, citations, events };
}

// frontendRead reads a stream the way Open WebUI's frontend SSE reader does.
async function frontendRead(res, where) {
  const reader = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
  let content = '';
  let done = false;
  for (;;) {
    const { value: event, done: end } = await reader.read();
    if (end) break;
    if (event.data === '[DONE]') { done = true; continue; }
    const parsed = JSON.parse(event.data);
    assert.equal(parsed.sources, undefined, `${where}: frontend would take a sources field as the message's sources`);
    if (parsed.error) assert.fail(`${where}: error ${JSON.stringify(parsed.error)}`);
    content += parsed.choices?.[0]?.delta?.content ?? '';
  }
  assert.ok(done, `${where}: no [DONE]`);
  return content;
}

const forwarded = { 'X-OpenWebUI-User-Name': 'Ada', 'X-OpenWebUI-User-Id': 'u-1', 'X-OpenWebUI-User-Role': 'user', 'X-OpenWebUI-Chat-Id': 'c-1' };
const body = { model, stream: true, messages: [{ role: 'user', content: question }] };

for (const [name, baseURL] of [['online', online], ['offline', offline]]) {
  const where = (what) => `openwebui ${name} ${what}`;
  for (const [setup, headers] of [['forwarded user headers', forwarded], ['no forwarded headers', {}]]) {
    const got = await backendRead(await post(baseURL, body, headers), where(setup));
    const listed = checkCitations(got.content, got.citations.map((c) => c.annotation), where(setup));
    // Citation chips are the pages the answer lists, once each.
    const chips = new Map();
    for (const c of got.citations) chips.set(c.url, c.name);
    for (const e of got.events.filter((e) => e.type === 'source')) {
      const d = e.data;
      assert.ok(Array.isArray(d.document) && d.document.length > 0, where(`${setup}: source event document`));
      assert.ok(Array.isArray(d.metadata) && d.metadata.length === d.document.length, where(`${setup}: source event metadata`));
      assert.equal(typeof d.source?.name, 'string', where(`${setup}: source event name`));
      chips.set(d.metadata[0].source ?? d.source.id, d.source.name);
    }
    assert.deepEqual([...chips.keys()].sort(), listed.map((l) => l.url).sort(), where(`${setup}: citation chips = Sources list`));
    if (headers === forwarded) {
      assert.equal(got.events.length, listed.length, where(`${setup}: one source event per listed page`));
      for (const e of got.events) assert.ok(!/^https?:/.test(e.data.source.name), where('source events carry titles'));
    } else {
      assert.equal(got.events.length, 0, where(`${setup}: source events only for Open WebUI`));
    }
    const text = await frontendRead(await post(baseURL, body, headers), where(`${setup} frontend`));
    assert.equal(text, got.content, where(`${setup}: frontend and backend read the same answer`));
  }
  // A non-stream answer to Open WebUI carries its citations as Open WebUI's own sources, one per listed page;
  // to any other client, no field of that name.
  const res = await post(baseURL, { ...body, stream: false }, forwarded);
  const completion = await res.json();
  const listed = checkCitations(completion.choices[0].message.content, completion.choices[0].message.annotations, where('completion'));
  assert.ok(Array.isArray(completion.sources), where('completion: Open WebUI gets sources'));
  assert.deepEqual(completion.sources.map((s) => s.source.url), listed.map((l) => l.url), where('completion: one source per listed page'));
  for (const s of completion.sources) {
    assert.equal(typeof s.source.name, 'string', where('completion: source name'));
    assert.ok(!/^https?:/.test(s.source.name), where('completion: sources carry titles'));
    assert.ok(Array.isArray(s.document) && s.document.length > 0, where('completion: source documents'));
    assert.equal(s.metadata.length, s.document.length, where('completion: one metadata per document'));
    for (const m of s.metadata) assert.equal(m.url, s.source.url, where('completion: metadata url'));
  }
  const plain = await (await post(baseURL, { ...body, stream: false })).json();
  assert.equal(plain.sources, undefined, where('completion: no field named sources for other clients'));
}

console.log('openwebui: ok');
