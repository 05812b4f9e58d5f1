// Drives the Vercel AI SDK (ai 7), unmodified, through a two-step tool loop against the
// gateway: generateText or streamText with one tool, lookup_code, whose execute function
// the SDK runs itself, and stopWhen: stepCountIs(3), so the SDK sends the tool's result
// back and takes the model's answer. The provider is the first argument:
//
//   responses          @ai-sdk/openai's default, openai(model): the Responses API
//   chat               @ai-sdk/openai in chat mode, openai.chat(model): Chat Completions
//   compatible         @ai-sdk/openai-compatible: Chat Completions
//   anthropic          @ai-sdk/anthropic: the Messages API
//
// A third argument, shell, local_shell or apply_patch, gives the model that OpenAI
// built-in instead (openai.tools.shell, localShell, applyPatch; the responses provider
// only), whose execute records what it was asked and answers RESULT.
//
//   BASE_URL=http://127.0.0.1:8080 MODEL=m ASK='…' RESULT='…' node aisdk.mjs <provider> <generate|stream> [builtin]
//
// It prints one JSON object on stdout: the arguments each execute got, the final text,
// the finish reason and the number of steps; an SDK error prints {"error":{...}} and
// exits 1. cmd/gateway/libs_test.go runs it.
import { generateText, streamText, stepCountIs, tool } from 'ai';
import { createOpenAI, openai } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { createAnthropic } from '@ai-sdk/anthropic';
import { z } from 'zod';

const [provider, mode, builtin] = process.argv.slice(2);
const base = process.env.BASE_URL + '/v1';
const name = process.env.MODEL;
const apiKey = 'sk-maskgate-test';
const model = {
  responses: () => createOpenAI({ baseURL: base, apiKey })(name),
  chat: () => createOpenAI({ baseURL: base, apiKey }).chat(name),
  compatible: () => createOpenAICompatible({ name: 'maskgate', baseURL: base, apiKey })(name),
  anthropic: () => createAnthropic({ baseURL: base, apiKey })(name),
}[provider]?.();
if (!model) {
  console.log(JSON.stringify({ error: { message: `unknown provider ${provider}` } }));
  process.exit(2);
}

const executed = [];
const result = process.env.RESULT;
// The built-ins record the call in the shape of its chat arguments.
const builtins = {
  shell: () => openai.tools.shell({
    execute: async ({ action }) => {
      executed.push({ commands: action.commands });
      return { output: [{ stdout: result, stderr: '', outcome: { type: 'exit', exitCode: 0 } }] };
    },
  }),
  local_shell: () => openai.tools.localShell({
    execute: async ({ action }) => {
      executed.push({ command: action.command });
      return { output: result };
    },
  }),
  apply_patch: () => openai.tools.applyPatch({
    execute: async ({ operation }) => {
      executed.push(operation);
      return { status: 'completed', output: result };
    },
  }),
};
const tools = builtin ? { [builtin]: builtins[builtin]() } : {
  lookup_code: tool({
    description: 'Looks up the code word filed under a key.',
    inputSchema: z.object({ key: z.string() }),
    execute: async (input) => {
      executed.push(input);
      return result;
    },
  }),
};

try {
  const opts = { model, tools, stopWhen: stepCountIs(3), maxRetries: 0, maxOutputTokens: 256, prompt: process.env.ASK };
  let text, finishReason, steps;
  if (mode === 'stream') {
    let failure;
    const r = streamText({ ...opts, onError: ({ error }) => { failure = error; } });
    text = await r.text;
    finishReason = await r.finishReason;
    steps = (await r.steps).length;
    if (failure) throw failure;
  } else {
    const r = await generateText(opts);
    ({ text, finishReason } = r);
    steps = r.steps.length;
  }
  console.log(JSON.stringify({ executed, text, finishReason, steps }));
} catch (e) {
  console.log(JSON.stringify({ executed, error: { name: e?.name, message: String(e?.message ?? e), status: e?.statusCode, body: e?.responseBody } }));
  process.exit(1);
}
