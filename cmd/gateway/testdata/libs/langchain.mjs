// Drives LangChain.js's ChatOpenAI (@langchain/openai), unmodified, through a two-step
// tool loop against the gateway, as its documentation writes one: bindTools with a tool
// (lookup_code), invoke, run each tool call of the answer (the tool's invoke turns a call
// into a ToolMessage), then invoke again with the history. The API is the first argument
// (chat: Chat Completions; responses: useResponsesApi: true), the second whether each
// turn is invoked whole or streamed (model.stream, the chunks concatenated).
//
//   BASE_URL=http://127.0.0.1:8080 MODEL=m ASK='…' RESULT='…' node langchain.mjs <chat|responses> <invoke|stream>
//
// It prints one JSON object on stdout: the arguments each tool run got, the final text
// and the number of model turns; an error prints {"error":{...}} and exits 1.
// cmd/gateway/libs_test.go runs it.
import { ChatOpenAI } from '@langchain/openai';
import { HumanMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';

const [api, mode] = process.argv.slice(2);
const executed = [];
const lookup = tool(
  async (input) => {
    executed.push(input);
    return process.env.RESULT;
  },
  { name: 'lookup_code', description: 'Looks up the code word filed under a key.', schema: z.object({ key: z.string() }) },
);
const model = new ChatOpenAI({
  model: process.env.MODEL,
  apiKey: 'sk-maskgate-test',
  configuration: { baseURL: process.env.BASE_URL + '/v1' },
  useResponsesApi: api === 'responses',
  maxRetries: 0,
  maxTokens: 64,
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
    if (!answer.tool_calls?.length) break;
    for (const call of answer.tool_calls) messages.push(await lookup.invoke(call));
  }
  console.log(JSON.stringify({ executed, text: answer.text, steps: turns, toolCalls: answer.tool_calls ?? [] }));
} catch (e) {
  console.log(JSON.stringify({ executed, error: { name: e?.name, message: String(e?.message ?? e), status: e?.status } }));
  process.exit(1);
}
