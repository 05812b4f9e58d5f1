// Drives the Vercel AI SDK, unmodified, through the gateway: its default OpenAI provider
// (openai(model): the Responses API with store: true), configured as every user
// configures it, by OPENAI_BASE_URL and OPENAI_API_KEY. It prints on stdout, as one JSON
// object, what each turn answered and the Responses body the SDK sent for it.
// gateway/aisdk_node_test.go runs it.
//
//   OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_API_KEY=KEY [MODEL=m1] node chat.mjs <generate|stream>
//
// An SDK error prints {"error":{...}} and exits 1.
import { generateText, streamText } from 'ai';
import { openai } from '@ai-sdk/openai';

const model = openai(process.env.MODEL ?? 'm1');

// The bodies the SDK posts, seen on the way out (the provider fetches through
// globalThis.fetch).
const sent = [];
const fetch0 = globalThis.fetch;
globalThis.fetch = (url, init) => {
  if (typeof init?.body === 'string') sent.push(JSON.parse(init.body));
  return fetch0(url, init);
};
const stream = process.argv[2] === 'stream';
const maxOutputTokens = Number(process.env.MAX_TOKENS ?? 32);

// turn runs one call over messages: the answer's text, the messages the SDK adds to the
// conversation, and the request body it sent.
async function turn(messages) {
  const opts = { model, messages, maxRetries: 0, maxOutputTokens };
  if (!stream) {
    const r = await generateText(opts);
    return { text: r.text, finishReason: r.finishReason, messages: r.response.messages, body: sent.at(-1), id: r.response.id };
  }
  const r = streamText({ ...opts, onError: () => {} });
  const text = await r.text;
  const response = await r.response;
  return { text, finishReason: await r.finishReason, messages: response.messages, body: sent.at(-1), id: response.id };
}

try {
  const messages = [{ role: 'user', content: 'Say hello.' }];
  const first = await turn(messages);
  messages.push(...first.messages, { role: 'user', content: 'Say it again.' });
  const second = await turn(messages);
  const out = [first, second].map((t) => ({ text: t.text, finishReason: t.finishReason, id: t.id, input: t.body?.input, store: t.body?.store }));
  console.log(JSON.stringify({ turns: out }));
} catch (e) {
  console.log(JSON.stringify({ error: { name: e?.name, message: String(e?.message ?? e), status: e?.statusCode, body: e?.responseBody } }));
  process.exit(1);
}
