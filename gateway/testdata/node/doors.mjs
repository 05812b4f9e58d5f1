// Drives the official SDKs, unmodified, through the gateway's Responses and Messages
// doors and prints on stdout, as one JSON object, what the SDK parsed.
// gateway/doors_node_test.go runs it.
//
//   BASE_URL=http://127.0.0.1:8080 [API_KEY=KEY] [MODEL=m1] node doors.mjs <scenario>
//
// BASE_URL is the gateway's root (no /v1). An SDK error prints {"error":{...}} and exits 1.
import OpenAI from 'openai';
import { ResponsesWS } from 'openai/resources/responses/ws';
import Anthropic from '@anthropic-ai/sdk';

const base = process.env.BASE_URL;
const model = process.env.MODEL ?? 'm1';
const apiKey = process.env.API_KEY ?? 'x';
const openai = new OpenAI({ baseURL: base + '/v1', apiKey, maxRetries: 0 });
const anthropic = new Anthropic({ baseURL: base, apiKey, maxRetries: 0 });

// The city is one of a few, so that a random-weight engine's forced call, its arguments
// held to the schema, ends well within max tokens.
const citySchema = { type: 'object', properties: { city: { type: 'string', enum: ['Paris', 'Oslo', 'Lima'] } }, required: ['city'], additionalProperties: false };
const weather = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: citySchema,
  strict: false,
};
const anthropicWeather = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: citySchema,
};
// Forced calls let a random-weight engine answer with a valid call.
const forced = process.env.FORCE === '1';

function items(resp) {
  return resp.output.map((it) => {
    switch (it.type) {
      case 'message':
        return { type: 'message', role: it.role, text: it.content.map((c) => c.text ?? '').join('') };
      case 'function_call':
        return { type: 'function_call', name: it.name, arguments: it.arguments, call_id: it.call_id };
      default:
        return { type: it.type };
    }
  });
}

function rusage(u) {
  if (!u) return null;
  return { input_tokens: u.input_tokens, cached_tokens: u.input_tokens_details?.cached_tokens ?? null, output_tokens: u.output_tokens, total_tokens: u.total_tokens };
}

const scenarios = {
  async 'responses-text'() {
    const r = await openai.responses.create({ model, input: 'say hello', max_output_tokens: 16 });
    return { id: r.id, status: r.status, output_text: r.output_text, items: items(r), usage: rusage(r.usage) };
  },
  async 'responses-stream'() {
    const stream = openai.responses.stream({ model, input: 'say hello', max_output_tokens: 16 });
    const types = [];
    let deltas = '';
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'response.output_text.delta') deltas += ev.delta;
    }
    const r = await stream.finalResponse();
    return { id: r.id, status: r.status, output_text: r.output_text, deltas, types, usage: rusage(r.usage) };
  },
  async 'responses-tools'() {
    const first = await openai.responses.create({
      model,
      input: [{ role: 'user', content: 'weather in Paris?' }],
      tools: [weather],
      tool_choice: forced ? { type: 'function', name: 'get_weather' } : 'auto',
      parallel_tool_calls: false,
      max_output_tokens: forced ? 160 : 64,
    });
    const call = first.output.find((it) => it.type === 'function_call');
    if (!call) return { first: items(first) };
    const second = await openai.responses.create({
      model,
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temp_c":21}' }],
      tools: [weather],
      max_output_tokens: 16,
    });
    const fetched = await openai.responses.retrieve(first.id);
    const deleted = await openai.responses.delete(first.id);
    return { first: items(first), second: items(second), second_status: second.status, fetched_id: fetched.id, deleted: deleted ?? null, usage: rusage(second.usage) };
  },
  async 'responses-ws'() {
    const ws = new ResponsesWS(openai);
    const events = [];
    const done = [];
    let resolve;
    ws.on('event', (ev) => {
      events.push(ev.type);
      if (['response.completed', 'response.incomplete', 'response.failed', 'error'].includes(ev.type)) {
        done.push(ev);
        resolve?.();
      }
    });
    const next = () => new Promise((r) => { resolve = r; });
    let wait = next();
    ws.send({ type: 'response.create', model, input: 'say hello', max_output_tokens: 16, store: false });
    await wait;
    const first = done[0];
    wait = next();
    ws.send({ type: 'response.create', model, previous_response_id: first.response?.id, input: 'again', max_output_tokens: 16, store: false });
    await wait;
    ws.close({ code: 1000, reason: 'done' });
    const second = done[1];
    return { events, first: first.type, second: second.type, first_id: first.response?.id ?? null,
      second_usage: rusage(second.response?.usage), second_text: second.response ? second.response.output.filter((i) => i.type === 'message').map((i) => i.content.map((c) => c.text).join('')).join('') : null };
  },
  // A turn with no text and no call, whole, streamed and over the WebSocket: what the
  // Agents SDK reads as the final output (the last message's text, output_text).
  async 'responses-empty'() {
    const whole = await openai.responses.create({ model, input: 'say nothing', max_output_tokens: 16 });
    const stream = openai.responses.stream({ model, input: 'say nothing', max_output_tokens: 16 });
    const types = [];
    for await (const ev of stream) types.push(ev.type);
    const streamed = await stream.finalResponse();
    // On the socket a warm-up (generate: false, no model output) first, then the turn.
    const ws = new ResponsesWS(openai);
    const ends = [];
    let resolve;
    ws.on('event', (ev) => {
      if (['response.completed', 'response.incomplete', 'response.failed', 'error'].includes(ev.type)) {
        ends.push(ev);
        resolve?.();
      }
    });
    const next = () => new Promise((r) => { resolve = r; });
    let wait = next();
    ws.send({ type: 'response.create', model, input: 'say nothing', generate: false, store: false });
    await wait;
    const warm = ends[0];
    wait = next();
    ws.send({ type: 'response.create', model, input: 'say nothing', max_output_tokens: 16, store: false });
    await wait;
    const last = ends[1];
    ws.close({ code: 1000, reason: 'done' });
    // A socket event's response is as sent, without the SDK's output_text: joined here
    // as the SDK joins it (every message's output_text parts).
    const joined = (r) => r.output.filter((i) => i.type === 'message').flatMap((i) => i.content).filter((c) => c.type === 'output_text').map((c) => c.text).join('');
    const view = (r) => ({ status: r.status, output_text: r.output_text ?? joined(r), output: r.output, usage: rusage(r.usage) });
    return { whole: view(whole), streamed: view(streamed), types, socket: last.response ? { type: last.type, ...view(last.response) } : last,
      warm_up: warm.response ? { type: warm.type, output: warm.response.output, usage: rusage(warm.response.usage) } : warm };
  },
  async 'messages-text'() {
    const m = await anthropic.messages.create({ model, max_tokens: 16, messages: [{ role: 'user', content: 'say hello' }] });
    return { id: m.id, type: m.type, role: m.role, stop_reason: m.stop_reason, content: m.content.map((b) => ({ type: b.type, text: b.text })), usage: m.usage };
  },
  async 'messages-stream'() {
    const stream = anthropic.messages.stream({ model, max_tokens: 16, messages: [{ role: 'user', content: 'say hello' }] });
    const types = [];
    let deltas = '';
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') deltas += ev.delta.text;
    }
    const m = await stream.finalMessage();
    return { types, deltas, stop_reason: m.stop_reason, text: m.content.filter((b) => b.type === 'text').map((b) => b.text).join(''), usage: m.usage };
  },
  async 'messages-tools'() {
    const m = await anthropic.messages.create({
      model,
      max_tokens: forced ? 160 : 64,
      tools: [anthropicWeather],
      tool_choice: forced ? { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true } : { type: 'auto', disable_parallel_tool_use: true },
      messages: [{ role: 'user', content: 'weather in Paris?' }],
    });
    const use = m.content.find((b) => b.type === 'tool_use');
    if (!use) return { stop_reason: m.stop_reason, content: m.content.map((b) => b.type) };
    const m2 = await anthropic.messages.create({
      model,
      max_tokens: 16,
      tools: [anthropicWeather],
      messages: [
        { role: 'user', content: 'weather in Paris?' },
        { role: 'assistant', content: m.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '{"temp_c":21}' }] },
      ],
    });
    return { stop_reason: m.stop_reason, tool_use: { name: use.name, input: use.input, id_ok: typeof use.id === 'string' && use.id.length > 0 }, second_stop: m2.stop_reason, usage: m2.usage };
  },
  async 'responses-hosted'() {
    const tools = [{ type: 'web_search' }];
    const r = await openai.responses.create({ model, input: 'news?', tools, max_output_tokens: 16 });
    const stream = openai.responses.stream({ model, input: 'news?', tools, max_output_tokens: 16 });
    let created = null;
    for await (const ev of stream) {
      if (ev.type === 'response.created') created = ev.response.maskgate ?? null;
    }
    const f = await stream.finalResponse();
    return { output_text: r.output_text, whole: r.maskgate ?? null, created, final: f.maskgate ?? null, final_text: f.output_text };
  },
  async 'messages-hosted'() {
    const tools = [{ type: 'web_search_20250305', name: 'web_search', max_uses: 1 }];
    const messages = [{ role: 'user', content: 'news?' }];
    const m = await anthropic.messages.create({ model, max_tokens: 16, tools, messages });
    const stream = anthropic.messages.stream({ model, max_tokens: 16, tools, messages });
    let start = null;
    for await (const ev of stream) {
      if (ev.type === 'message_start') start = ev.message.maskgate ?? null;
    }
    const f = await stream.finalMessage();
    return { text: m.content.map((b) => b.text ?? '').join(''), whole: m.maskgate ?? null, start, final: f.maskgate ?? null };
  },
  // A stream whose upstream fails after the gateway's early events: what the SDK
  // makes of the door's in-stream error.
  async 'responses-stream-error'() {
    const stream = openai.responses.stream({ model, input: 'say hello', max_output_tokens: 16 });
    const types = [];
    try {
      for await (const ev of stream) types.push(ev.type);
      await stream.finalResponse();
    } catch (e) {
      return { types, thrown: e.constructor.name, message: e.message };
    }
    return { types, thrown: null };
  },
  async 'messages-stream-error'() {
    const stream = anthropic.messages.stream({ model, max_tokens: 16, messages: [{ role: 'user', content: 'say hello' }] });
    const types = [];
    try {
      for await (const ev of stream) types.push(ev.type);
      await stream.finalMessage();
    } catch (e) {
      return { types, thrown: e.constructor.name, message: e.message };
    }
    return { types, thrown: null };
  },
  async 'messages-count'() {
    const c = await anthropic.messages.countTokens({ model, tools: [anthropicWeather], messages: [{ role: 'user', content: 'weather in Paris?' }] });
    return { input_tokens: c.input_tokens };
  },
  // models.list() paged two at a time (the SDK follows has_more with after_id), a page
  // read backwards with before_id, models.retrieve() on both SDKs, and an unknown id on both.
  async 'models'() {
    const ids = [];
    for await (const m of anthropic.models.list({ limit: 2 })) ids.push(m.id);
    const back = await anthropic.models.list({ limit: 1, before_id: ids[ids.length - 1] });
    const one = await anthropic.models.retrieve(model);
    const openaiIds = [];
    for await (const m of openai.models.list()) openaiIds.push(m.id);
    const o = await openai.models.retrieve(model);
    const missing = async (f) => {
      try {
        await f();
        return null;
      } catch (e) {
        return { status: e.status ?? null, type: e.error?.error?.type ?? e.type ?? null, code: e.code ?? null };
      }
    };
    return {
      ids,
      back: { ids: back.data.map((m) => m.id), has_more: back.has_more, first_id: back.first_id, last_id: back.last_id },
      one: { type: one.type, id: one.id, display_name: one.display_name, created_at: one.created_at },
      openai_ids: openaiIds,
      openai_one: { object: o.object, id: o.id, owned_by: o.owned_by, created: o.created },
      missing: await missing(() => anthropic.models.retrieve('no-such-model')),
      openai_missing: await missing(() => openai.models.retrieve('no-such-model')),
    };
  },
  async 'messages-error'() {
    await anthropic.messages.create({ model: 'no-such-model', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] });
    return { unexpected: 'no error' };
  },
};

const name = process.argv[2] ?? process.env.SCENARIO;
if (!scenarios[name]) {
  console.error('unknown scenario ' + name + '; one of ' + Object.keys(scenarios).join(', '));
  process.exit(2);
}
try {
  console.log(JSON.stringify(await scenarios[name]()));
} catch (e) {
  console.log(JSON.stringify({ error: { status: e.status ?? null, message: e.message, type: e.error?.type ?? e.type ?? null, inner: e.error?.error?.type ?? null } }));
  process.exit(1);
}
