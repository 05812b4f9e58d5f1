// Drives the OpenAI Agents SDK (@openai/agents), unmodified, through a two-step tool
// loop against the gateway: an Agent with one function tool (lookup_code) run by run(),
// which calls the model, runs the tool, sends its result and takes the final output. The
// API is the first argument (responses, the SDK's default, or chat: Chat Completions,
// setOpenAIAPI('chat_completions')), the second whether run() streams. A third argument,
// shell or apply_patch, gives the agent that built-in instead (shellTool with a Shell
// that runs nothing, applyPatchTool with an Editor that writes nothing; Responses only):
// each records what it was asked and answers RESULT.
//
//   BASE_URL=http://127.0.0.1:8080 MODEL=m ASK='…' RESULT='…' node agents.mjs <responses|chat> <run|stream> [shell|apply_patch]
//
// Tracing is off (it would export to OpenAI). It prints one JSON object on stdout: the
// arguments each tool run got, the final output and the number of model responses; an
// error prints {"error":{...}} and exits 1. cmd/gateway/libs_test.go runs it.
import { Agent, run, tool, shellTool, applyPatchTool, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';

const [api, mode, builtin] = process.argv.slice(2);
setTracingDisabled(true);
setDefaultOpenAIClient(new OpenAI({ baseURL: process.env.BASE_URL + '/v1', apiKey: 'sk-maskgate-test', maxRetries: 0 }));
setOpenAIAPI(api === 'chat' ? 'chat_completions' : 'responses');

const executed = [];
const lookup = tool({
  name: 'lookup_code',
  description: 'Looks up the code word filed under a key.',
  parameters: z.object({ key: z.string() }),
  execute: async (input) => {
    executed.push(input);
    return process.env.RESULT;
  },
});
// The built-ins record the call in the shape of its chat arguments.
const shell = shellTool({
  shell: {
    run: async (action) => {
      executed.push({ commands: action.commands });
      return { output: [{ stdout: process.env.RESULT, stderr: '', outcome: { type: 'exit', exitCode: 0 } }] };
    },
  },
});
const done = async (operation) => {
  executed.push(operation);
  return { status: 'completed', output: process.env.RESULT };
};
const patch = applyPatchTool({ editor: { createFile: done, updateFile: done, deleteFile: done } });
const agent = new Agent({
  name: 'Clerk',
  instructions: 'Answer with the code word lookup_code returns.',
  model: process.env.MODEL,
  modelSettings: { maxTokens: 256 },
  tools: [{ shell, apply_patch: patch }[builtin] ?? lookup],
});

try {
  let result;
  if (mode === 'stream') {
    result = await run(agent, process.env.ASK, { stream: true, maxTurns: 4 });
    for await (const _ of result) { /* drain the events */ }
    await result.completed;
    if (result.error) throw result.error;
  } else {
    result = await run(agent, process.env.ASK, { maxTurns: 4 });
  }
  console.log(JSON.stringify({ executed, text: result.finalOutput, steps: result.rawResponses.length }));
} catch (e) {
  console.log(JSON.stringify({ executed, error: { name: e?.name, message: String(e?.message ?? e), status: e?.status } }));
  process.exit(1);
}
