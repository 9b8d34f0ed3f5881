// A client developer's check that ragproxy works with the official OpenAI
// Node SDK: point baseURL at the proxy and use the SDK as usual.
//
//   RAGPROXY_BASE_URL=http://127.0.0.1:8080/v1 RAGPROXY_API_KEY=sk-... node sdk-passthrough.mjs
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const baseURL = process.env.RAGPROXY_BASE_URL ?? 'http://127.0.0.1:8080/v1';
const apiKey = process.env.RAGPROXY_API_KEY ?? 'sk-local';
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });

// Models: the assistant is listed.
const ids = [];
for await (const m of client.models.list()) ids.push(m.id);
assert.ok(ids.includes('ragproxy'), `models: ${ids}`);

// A plain completion.
const messages = [{ role: 'user', content: 'hello from node' }];
const completion = await client.chat.completions.create({ model: 'ragproxy', messages });
assert.equal(completion.object, 'chat.completion');
assert.equal(completion.choices[0].message.role, 'assistant');
assert.equal(completion.choices[0].message.content, 'You said: hello from node');
assert.ok(completion.usage.total_tokens > 0);

// A stream with usage, collected the usual way.
const stream = await client.chat.completions.create({
  model: 'ragproxy', messages, stream: true, stream_options: { include_usage: true },
});
let text = '';
let finish = null;
let usage = null;
const chunkIds = new Set();
for await (const chunk of stream) {
  chunkIds.add(chunk.id);
  if (chunk.usage) usage = chunk.usage;
  const choice = chunk.choices[0];
  if (!choice) continue;
  text += choice.delta.content ?? '';
  if (choice.finish_reason) finish = choice.finish_reason;
}
assert.equal(text, 'You said: hello from node');
assert.equal(finish, 'stop');
assert.ok(usage && usage.completion_tokens > 0, 'usage chunk');
assert.equal(chunkIds.size, 1, 'one id on every chunk');

// The SDK's stream helper accumulates the same message.
const runner = client.chat.completions.stream({ model: 'ragproxy', messages });
const final = await runner.finalChatCompletion();
assert.equal(final.choices[0].message.content, 'You said: hello from node');

// n answers: the SDK's stream helper keeps them apart by choice index.
const many = await client.chat.completions.stream({ model: 'ragproxy', messages, n: 2 }).finalChatCompletion();
assert.deepEqual(many.choices.map((c) => [c.index, c.message.content]),
  [[0, 'You said: hello from node'], [1, 'You said: hello from node']]);

// Typed errors: a wrong key and an invalid request.
const bad = new OpenAI({ baseURL, apiKey: 'sk-wrong-key', maxRetries: 0 });
await assert.rejects(bad.chat.completions.create({ model: 'ragproxy', messages }), (err) => {
  assert.ok(err instanceof OpenAI.AuthenticationError, `got ${err?.constructor?.name}`);
  assert.equal(err.status, 401);
  assert.equal(err.code, 'invalid_api_key');
  assert.ok(err.headers.get('x-request-id'), 'x-request-id header');
  return true;
});
await assert.rejects(client.chat.completions.create({ model: 'ragproxy', messages: [] }), (err) => {
  assert.ok(err instanceof OpenAI.BadRequestError, `got ${err?.constructor?.name}`);
  assert.equal(err.status, 400);
  assert.equal(err.param, 'messages');
  return true;
});
await assert.rejects(client.models.retrieve('no-such-model'), (err) => {
  assert.ok(err instanceof OpenAI.NotFoundError, `got ${err?.constructor?.name}`);
  assert.equal(err.code, 'model_not_found');
  return true;
});

console.log('node sdk: ok');
