// The OpenAI Node SDK's helpers on structured answers (response_format json_schema and json_object), as a client
// developer uses them: chat.completions.parse() and the stream helper read the content as JSON, so ragproxy must
// leave it as the model wrote it (no Sources list) or, without a model, write JSON in the request's format.
//   node structured.mjs openai     (6.x)
//   node structured.mjs openai5    (5.8.2)
import assert from 'node:assert/strict';
import { online, offline, apiKey, model, question } from './common.mjs';

const pkg = process.argv[2] ?? 'openai';
const { default: OpenAI } = await import(pkg);
const messages = [{ role: 'user', content: question }];
const schema = {
  type: 'json_schema',
  json_schema: {
    name: 'answer',
    strict: true,
    schema: {
      type: 'object',
      properties: { answer: { type: 'string' }, sources: { type: 'array', items: { type: 'string' } } },
      required: ['answer', 'sources'],
      additionalProperties: false,
    },
  },
};

// checkAnswer asserts a parsed answer: the fact in "answer", and no Sources list in the JSON's text.
function checkAnswer(content, parsed, annotations, where) {
  assert.equal(typeof parsed?.answer, 'string', `${where}: parsed answer`);
  assert.match(parsed.answer, /\$4,850/, `${where}: the fact`);
  assert.ok(!content.includes('**Sources**'), `${where}: a Sources list in ${content}`);
  assert.ok(Array.isArray(annotations) && annotations.length > 0, `${where}: no annotations`);
  for (const a of annotations) assert.equal(a.type, 'url_citation', `${where}: annotation type`);
}

for (const [name, baseURL] of [['online', online], ['offline', offline]]) {
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
  const where = (what) => `${pkg} ${name} ${what}`;

  const parsed = await client.chat.completions.parse({ model, messages, response_format: schema });
  const m = parsed.choices[0].message;
  checkAnswer(m.content, m.parsed, m.annotations, where('parse json_schema'));

  // The stream helper parses with the SDK's own zod helpers only; its content must parse all the same.
  const final = await client.chat.completions.stream({ model, messages, response_format: schema }).finalChatCompletion();
  const f = final.choices[0].message;
  checkAnswer(f.content, f.parsed ?? JSON.parse(f.content), f.annotations, where('stream json_schema'));

  const obj = await client.chat.completions.create({ model, messages, response_format: { type: 'json_object' } });
  const o = obj.choices[0].message;
  checkAnswer(o.content, JSON.parse(o.content), o.annotations, where('json_object'));

  const stream = await client.chat.completions.create({ model, messages, response_format: { type: 'json_object' }, stream: true });
  let text = '';
  let annotations = [];
  for await (const chunk of stream) {
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    text += choice.delta.content ?? '';
    if (choice.delta.annotations) annotations = annotations.concat(choice.delta.annotations);
  }
  checkAnswer(text, JSON.parse(text), annotations, where('stream json_object'));
}

console.log(`${pkg} structured: ok`);
