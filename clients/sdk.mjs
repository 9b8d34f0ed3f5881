// The official OpenAI Node SDK against ragproxy's grounded answers, as a client developer uses it:
//   node sdk.mjs openai     (6.x)
//   node sdk.mjs openai5    (5.8.2, the version LibreChat's API pins)
// Annotations are read through the SDK's own types: message.annotations on a completion, and the stream helper's
// final message.
import assert from 'node:assert/strict';
import { online, offline, apiKey, model, question, checkCitations } from './common.mjs';

const pkg = process.argv[2] ?? 'openai';
const { default: OpenAI } = await import(pkg);
const messages = [{ role: 'user', content: question }];

for (const [name, baseURL] of [['online', online], ['offline', offline]]) {
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
  const where = (what) => `${pkg} ${name} ${what}`;

  const completion = await client.chat.completions.create({ model, messages });
  const msg = completion.choices[0].message;
  assert.match(msg.content, /\$4,850/, where('completion'));
  checkCitations(msg.content, msg.annotations, where('completion'));
  assert.equal(completion.sources, undefined, where('completion: no field named sources'));

  // A raw stream: every chunk parses, and one delta carries all of the answer's annotations.
  const stream = await client.chat.completions.create({ model, messages, stream: true, stream_options: { include_usage: true } });
  let text = '';
  let annotations = null;
  let annotated = 0;
  let usage = null;
  for await (const chunk of stream) {
    assert.equal(chunk.sources, undefined, where('stream: no field named sources'));
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    text += choice.delta.content ?? '';
    if (choice.delta.annotations) {
      annotations = choice.delta.annotations;
      annotated++;
    }
  }
  assert.equal(annotated, 1, where('stream: deltas with annotations'));
  checkCitations(text, annotations, where('stream'));
  assert.ok(usage?.total_tokens > 0, where('stream: usage'));

  // The stream helper, also when Open WebUI source events come along (their frames have "choices": []).
  for (const headers of [{}, { 'X-OpenWebUI-Chat-Id': 'chat-1' }]) {
    const final = await client.chat.completions.stream({ model, messages }, { headers }).finalChatCompletion();
    const m = final.choices[0].message;
    checkCitations(m.content, m.annotations, where(`stream helper ${JSON.stringify(headers)}`));
  }

  // n answers: each is cited on its own.
  const many = await client.chat.completions.stream({ model, messages, n: 2 }).finalChatCompletion();
  assert.equal(many.choices.length, 2, where('n=2'));
  for (const c of many.choices) checkCitations(c.message.content, c.message.annotations, where(`n=2 answer ${c.index}`));
}

console.log(`${pkg}: ok`);
