// Drives the official `openai` Node package, unmodified, against the endpoints the
// gateway passes through (embeddings, legacy completions) and prints on stdout, as one
// JSON object, what the SDK parsed. gateway/passthrough_engine_test.go runs it.
//
//   BASE_URL=http://127.0.0.1:8080/v1 MODEL=NAME [API_KEY=KEY] node endpoints.mjs <scenario>
//
// An SDK error prints {"error":{...}} with its status, type and code, and exits 1.
import OpenAI from 'openai';

const model = process.env.MODEL;

const scenarios = {
  // The SDK asks for base64 unless told otherwise and decodes the vectors itself.
  async embeddings(client) {
    const r = await client.embeddings.create({ model, input: ['hello world', 'a gateway'] });
    return {
      dims: r.data.map((d) => d.embedding.length),
      finite: r.data.every((d) => d.embedding.every((v) => Number.isFinite(v))),
      nonzero: r.data.every((d) => d.embedding.some((v) => v !== 0)),
      prompt_tokens: r.usage.prompt_tokens,
    };
  },

  // Fill in the middle: a prefix and a suffix.
  async completions(client) {
    const r = await client.completions.create({
      model,
      prompt: 'def add(a, b):\n    ',
      suffix: '\n    return c\n',
      max_tokens: 4,
      temperature: 0,
    });
    return { text: r.choices[0].text, finish_reason: r.choices[0].finish_reason, usage: r.usage };
  },

  async 'completions-stream'(client) {
    const stream = await client.completions.create({ model, prompt: 'Once upon', max_tokens: 4, stream: true });
    let text = '';
    let chunks = 0;
    let finish = null;
    let usage = null;
    for await (const c of stream) {
      chunks++;
      for (const ch of c.choices) {
        text += ch.text;
        finish = ch.finish_reason ?? finish;
      }
      usage = c.usage ?? usage;
    }
    return { text, chunks, finish_reason: finish, usage };
  },
};

const name = process.argv[2];
const run = scenarios[name];
if (!process.env.BASE_URL || !model || !run) {
  process.stderr.write(`usage: BASE_URL=http://host:port/v1 MODEL=NAME node endpoints.mjs <${Object.keys(scenarios).join('|')}>\n`);
  process.exit(2);
}

const client = new OpenAI({ baseURL: process.env.BASE_URL, apiKey: process.env.API_KEY || 'x', maxRetries: 0, timeout: 30_000 });

try {
  process.stdout.write(JSON.stringify(await run(client)) + '\n');
} catch (err) {
  const e = err instanceof OpenAI.APIError ? err : null;
  process.stdout.write(
    JSON.stringify({
      error: { status: e?.status ?? null, message: e?.error?.message ?? String(err?.message ?? err), type: e?.type ?? null, code: e?.code ?? null },
    }) + '\n',
  );
  process.exit(1);
}
