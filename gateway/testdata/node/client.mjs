// Drives the official `openai` Node package, unmodified, against the gateway and prints
// on stdout, as one JSON object, what the SDK parsed. gateway/sdk_node_test.go runs it.
//
//   BASE_URL=http://127.0.0.1:8080/v1 [API_KEY=KEY] [THREAD_ID=ID] node client.mjs <scenario>
//
// API_KEY is the client key (default "x", for a gateway without keys); THREAD_ID, when
// set, is sent as X-Thread-Id on every request.
// The scenario comes from the first argument, else from SCENARIO. An SDK error prints
// {"error":{...}} with its status, message, type, param and code, and exits 1; a usage
// mistake exits 2.
import OpenAI from 'openai';

const model = 'm1';

// The tools every tool scenario declares; the Go test checks the upstream got both.
const tools = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather for a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'get_time',
      description: 'Local time in a time zone',
      parameters: { type: 'object', properties: { tz: { type: 'string' } } },
    },
  },
];

function usage(u) {
  if (!u) return null;
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.total_tokens,
    cached_tokens: u.prompt_tokens_details?.cached_tokens ?? null,
  };
}

function toolCalls(message) {
  return (message.tool_calls ?? []).map((tc) => ({
    id: tc.id,
    type: tc.type,
    name: tc.function.name,
    arguments: tc.function.arguments,
  }));
}

const scenarios = {
  async text(client) {
    const cc = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'say hello' }],
    });
    const choice = cc.choices[0];
    return { content: choice.message.content, finish_reason: choice.finish_reason, usage: usage(cc.usage) };
  },

  async tools(client) {
    const cc = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'weather and time in Paris' }],
      tools,
      tool_choice: 'required',
    });
    const choice = cc.choices[0];
    return { finish_reason: choice.finish_reason, tool_calls: toolCalls(choice.message) };
  },

  async 'stream-text'(client) {
    const stream = client.chat.completions.stream({
      model,
      messages: [{ role: 'user', content: 'greet the world' }],
      stream_options: { include_usage: true },
    });
    const deltas = [];
    stream.on('content', (delta) => deltas.push(delta));
    const cc = await stream.finalChatCompletion();
    const choice = cc.choices[0];
    return {
      deltas,
      content: choice.message.content,
      finish_reason: choice.finish_reason,
      usage: usage(cc.usage),
    };
  },

  async 'stream-tools'(client) {
    const stream = client.chat.completions.stream({
      model,
      messages: [{ role: 'user', content: 'weather' }],
      tools,
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      stream_options: { include_usage: true },
    });
    const done = [];
    stream.on('tool_calls.function.arguments.done', (e) =>
      done.push({ index: e.index, name: e.name, arguments: e.arguments }),
    );
    const cc = await stream.finalChatCompletion();
    const choice = cc.choices[0];
    return {
      arguments_done: done,
      finish_reason: choice.finish_reason,
      tool_calls: toolCalls(choice.message),
      usage: usage(cc.usage),
    };
  },
};

const name = process.argv[2] ?? process.env.SCENARIO;
const run = scenarios[name];
if (!process.env.BASE_URL || !run) {
  process.stderr.write(
    `usage: BASE_URL=http://host:port/v1 node client.mjs <${Object.keys(scenarios).join('|')}>\n`,
  );
  process.exit(2);
}

// Everything is explicit so that no OPENAI_* variable of the caller's changes the run.
const client = new OpenAI({
  baseURL: process.env.BASE_URL,
  apiKey: process.env.API_KEY || 'x',
  defaultHeaders: process.env.THREAD_ID ? { 'X-Thread-Id': process.env.THREAD_ID } : {},
  maxRetries: 0,
  timeout: 10_000,
});

try {
  process.stdout.write(JSON.stringify(await run(client)) + '\n');
} catch (err) {
  const e = err instanceof OpenAI.APIError ? err : null;
  process.stdout.write(
    JSON.stringify({
      error: {
        class: err?.constructor?.name ?? typeof err,
        status: e?.status ?? null,
        // APIError.message is prefixed with the status; the server's own words are in .error.
        message: e?.error?.message ?? String(err?.message ?? err),
        type: e?.type ?? null,
        param: e?.param ?? null,
        code: e?.code ?? null,
      },
    }) + '\n',
  );
  process.exit(1);
}
