// Asks each library, unmodified, for a structured output through the gateway: one zod
// object (a string of at most 12 characters, an enum, a boolean), the library's own way
// of asking for it, and the object the library parsed and checked against the schema.
// The first argument names the library's door:
//
//   aisdk-responses    the Vercel AI SDK's generateObject on @ai-sdk/openai, openai(model): Responses text.format
//   aisdk-chat         generateObject on openai.chat(model): Chat Completions response_format
//   aisdk-compatible   generateObject on @ai-sdk/openai-compatible with supportsStructuredOutputs: response_format
//   langchain          LangChain.js's ChatOpenAI.withStructuredOutput(schema, {method: 'jsonSchema'}): Chat Completions
//   agents             the OpenAI Agents SDK's Agent with outputType the schema, run(): Responses text.format
//
// SEED goes in the request's seed where the library sends one (the AI SDK's seed,
// LangChain's seed call option; the Agents SDK's providerData puts it in the Responses
// body, which has no seed field) and into the prompt's text as well.
//
//   BASE_URL=http://127.0.0.1:8080 MODEL=m SEED=1 node structured.mjs <door>
//
// It prints one JSON object on stdout: the parsed object and the schema zod renders for
// it (z.toJSONSchema); an error prints {"error":{...}} and exits 1.
// cmd/gateway/libs_structured_test.go runs it.
import { generateObject } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { ChatOpenAI } from '@langchain/openai';
import { Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';

const [door] = process.argv.slice(2);
const base = process.env.BASE_URL + '/v1';
const name = process.env.MODEL;
const seed = Number(process.env.SEED);
const apiKey = 'sk-maskgate-test';
const schema = z.object({
  name: z.string().max(12),
  color: z.enum(['red', 'green', 'blue']),
  ok: z.boolean(),
  count: z.number().int().min(0),
});
const prompt = `Describe person number ${seed} as JSON.`;
const maxTokens = 200;

async function aisdk(model) {
  const r = await generateObject({ model, schema, schemaName: 'person', prompt, seed, maxRetries: 0, maxOutputTokens: maxTokens });
  return r.object;
}

const doors = {
  'aisdk-responses': () => aisdk(createOpenAI({ baseURL: base, apiKey })(name)),
  'aisdk-chat': () => aisdk(createOpenAI({ baseURL: base, apiKey }).chat(name)),
  'aisdk-compatible': () => aisdk(createOpenAICompatible({ name: 'maskgate', baseURL: base, apiKey, supportsStructuredOutputs: true })(name)),
  langchain: async () => {
    const model = new ChatOpenAI({ model: name, apiKey, configuration: { baseURL: base }, maxRetries: 0, maxTokens });
    return model.withStructuredOutput(schema, { name: 'person', method: 'jsonSchema' }).invoke(prompt, { seed });
  },
  agents: async () => {
    setTracingDisabled(true);
    setDefaultOpenAIClient(new OpenAI({ baseURL: base, apiKey, maxRetries: 0 }));
    setOpenAIAPI('responses');
    const agent = new Agent({
      name: 'Clerk',
      instructions: 'Answer with a person.',
      model: name,
      modelSettings: { maxTokens, providerData: { seed } },
      outputType: schema,
    });
    const r = await run(agent, prompt, { maxTurns: 1 });
    return r.finalOutput;
  },
};

try {
  if (!doors[door]) throw new Error(`unknown door ${door}`);
  const object = await doors[door]();
  console.log(JSON.stringify({ object, schema: z.toJSONSchema(schema) }));
} catch (e) {
  console.log(JSON.stringify({ error: { name: e?.name, message: String(e?.message ?? e), status: e?.statusCode ?? e?.status, body: e?.responseBody, text: e?.text } }));
  process.exit(1);
}
