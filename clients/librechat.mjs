// LibreChat's agents library (@librechat/agents, what LibreChat 0.8 runs for a custom OpenAI-compatible endpoint)
// against ragproxy: a chat run and conversation titles by each title method, with the settings LibreChat builds
// for a custom endpoint (provider openAI, the endpoint's baseURL and apiKey, the user's id, streaming chats and
// non-streaming titles).
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Run, Providers } from '@librechat/agents';
import { HumanMessage } from '@langchain/core/messages';
import { online, offline, apiKey, model, question } from './common.mjs';

// LangChain fetches token-count data from the internet when it first counts tokens; these machines have none, so
// such a fetch fails at once instead of waiting for a timeout. Calls to the proxies go through.
const realFetch = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = typeof input === 'string' ? input : input?.url ?? String(input);
  if (!url.startsWith(online) && !url.startsWith(offline)) return Promise.reject(new TypeError(`no network: ${url}`));
  return realFetch(input, init);
};
const realWarn = console.warn;
console.warn = (...a) => { if (!String(a[0]).startsWith('Failed to calculate number of tokens')) realWarn(...a); };

// titleOK is what a user must see as a conversation's title: a few words, never the grounded answer.
function titleOK(title, where) {
  assert.equal(typeof title, 'string', `${where}: title ${title}`);
  assert.ok(title.length > 0 && title.split(/\s+/).length <= 5, `${where}: title ${JSON.stringify(title)}`);
  assert.ok(!/Sources|https?:|\n/.test(title), `${where}: the title is an answer: ${JSON.stringify(title)}`);
}

for (const [name, baseURL] of [['online', online], ['offline', offline]]) {
  const where = (what) => `librechat ${name} ${what}`;

  // models.fetch: LibreChat lists the endpoint's models with its apiKey as bearer token.
  const models = await (await fetch(`${baseURL}/models`, { headers: { Authorization: `Bearer ${apiKey}` } })).json();
  assert.ok(models.data.some((m) => m.id === model), where(`models: ${JSON.stringify(models)}`));

  const llmConfig = {
    provider: Providers.OPENAI, model, apiKey, streaming: true, user: 'user-1',
    configuration: { baseURL },
  };
  const run = await Run.create({
    runId: crypto.randomUUID(),
    graphConfig: { type: 'standard', instructions: 'You are a helpful assistant.', llmConfig },
    returnContent: true,
    customHandlers: {},
  });
  const config = { runId: crypto.randomUUID(), streamMode: 'values', version: 'v2', configurable: { thread_id: `t-${name}`, user_id: 'user-1' } };
  const parts = await run.processStream({ messages: [new HumanMessage(question)] }, config);
  const text = (parts ?? []).filter((p) => p?.type === 'text').map((p) => p.text).join('');
  assert.match(text, /\$4,850/, where(`chat: ${JSON.stringify(parts)}`));
  assert.match(text, /\*\*Sources\*\*\n- \[[^\]]+\]\(https:\/\//, where('chat: the Sources list LibreChat renders as markdown'));

  // Titles: LibreChat drops `streaming` from the title options, so titles are asked without streaming.
  const { provider, streaming: _streaming, ...clientOptions } = llmConfig;
  for (const titleMethod of ['completion', 'structured', 'functions']) {
    const result = await run.generateTitle({
      provider, inputText: question, contentParts: [{ type: 'text', text }], clientOptions: { ...clientOptions, maxRetries: 0 },
      titleMethod, chainOptions: { configurable: { thread_id: `t-${name}`, user_id: 'user-1' } },
    });
    titleOK(result?.title, where(`title (${titleMethod})`));
    if (titleMethod !== 'completion') assert.equal(result.language, 'English', where(`language (${titleMethod})`));
  }
}

console.log('librechat: ok');
