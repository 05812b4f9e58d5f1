// Drives LangChain.js's ChatOpenAI (@langchain/openai), unmodified, through a two-step
// tool loop against the gateway, as its documentation writes one: bindTools with a tool
// (lookup_code), invoke, run each tool call of the answer (the tool's invoke turns a call
// into a ToolMessage), then invoke again with the history. The API is the first argument
// (chat: Chat Completions; responses: useResponsesApi: true), the second whether each
// turn is invoked whole or streamed (model.stream, the chunks concatenated).
//
// A third argument, shell, local_shell or apply_patch, binds that OpenAI built-in
// instead (tools.shell, tools.localShell, tools.applyPatch of @langchain/openai; the
// responses API only): the call is one of the answer's additional_kwargs.tool_outputs,
// the tool runs its action, and its result goes back as a ToolMessage. Its execute
// records what it was asked and answers RESULT.
//
//   BASE_URL=http://127.0.0.1:8080 MODEL=m ASK='…' RESULT='…' node langchain.mjs <chat|responses> <invoke|stream> [builtin]
//
// It prints one JSON object on stdout: the arguments each tool run got, the final text
// and the number of model turns; an error prints {"error":{...}} and exits 1.
// cmd/gateway/libs_test.go runs it.
import { ChatOpenAI, tools } from '@langchain/openai';
import { HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';

const [api, mode, builtin] = process.argv.slice(2);
const executed = [];
const result = process.env.RESULT;
// The built-ins record the call in the shape of its chat arguments.
const builtins = {
  shell: () => tools.shell({
    execute: async (action) => {
      executed.push({ commands: action.commands });
      return { output: [{ stdout: result, stderr: '', outcome: { type: 'exit', exit_code: 0 } }] };
    },
  }),
  local_shell: () => tools.localShell({
    execute: async (action) => {
      executed.push({ command: action.command });
      return result;
    },
  }),
  apply_patch: () => tools.applyPatch({
    execute: async (operation) => {
      executed.push(operation);
      return result;
    },
  }),
};
const lookup = builtin ? builtins[builtin]() : tool(
  async (input) => {
    executed.push(input);
    return result;
  },
  { name: 'lookup_code', description: 'Looks up the code word filed under a key.', schema: z.object({ key: z.string() }) },
);
const model = new ChatOpenAI({
  model: process.env.MODEL,
  apiKey: 'sk-maskgate-test',
  configuration: { baseURL: process.env.BASE_URL + '/v1' },
  useResponsesApi: api === 'responses',
  maxRetries: 0,
  maxTokens: 256,
}).bindTools([lookup]);

// turn asks the model once, whole or streamed, and returns its message.
async function turn(messages) {
  if (mode !== 'stream') return model.invoke(messages);
  let whole;
  for await (const chunk of await model.stream(messages)) whole = whole ? whole.concat(chunk) : chunk;
  return whole;
}

try {
  const messages = [new HumanMessage(process.env.ASK)];
  let turns = 0, answer;
  for (; turns < 3; ) {
    answer = await turn(messages);
    turns++;
    messages.push(answer);
    if (builtin) {
      // A built-in's call is one of the answer's tool_outputs (@langchain/openai's
      // documented loop): the tool runs its action (or operation). Its result goes back
      // as a ToolMessage for the call's call_id: the documented raw output item
      // ({type: 'shell_call_output', …}) is refused by @langchain/core 1.4.0's message
      // coercion ("only human, AI, system, developer, or tool message").
      const call = answer.additional_kwargs?.tool_outputs?.find((o) => o.type === builtin + '_call');
      if (!call) break;
      const output = await lookup.invoke(builtin === 'apply_patch' ? call.operation : call.action);
      messages.push(new ToolMessage({ tool_call_id: call.call_id, content: typeof output === 'string' ? output : JSON.stringify(output) }));
      continue;
    }
    if (!answer.tool_calls?.length) break;
    for (const call of answer.tool_calls) messages.push(await lookup.invoke(call));
  }
  console.log(JSON.stringify({ executed, text: answer.text, steps: turns, toolCalls: answer.tool_calls ?? [] }));
} catch (e) {
  console.log(JSON.stringify({ executed, error: { name: e?.name, message: String(e?.message ?? e), status: e?.status } }));
  process.exit(1);
}
