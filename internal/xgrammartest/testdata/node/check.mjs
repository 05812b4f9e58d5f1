// Checks structural tags with xgrammar (@mlc-ai/web-xgrammar, its C++ core built to
// WASM) for internal/xgrammartest. Reads one JSON request on stdin:
//
//   {"cases": [{"tag": "<structural tag JSON text>",
//               "outputs": ["whole model output", ...],
//               "vocab": ["token text", ...],   // optional: a raw vocabulary,
//               "stop": [token id, ...],        // its stop tokens,
//               "walks": [[token id, ...], ...] // and token walks for a GrammarMatcher
//              }, ...]}
//
// and prints one JSON answer on stdout:
//
//   {"version": "0.1.27",
//    "results": [{"error": "why the tag did not compile, or empty",
//                 "accepted": [true, ...],   // per output, as Testings.isGrammarAcceptString
//                 "walks": [{"rejected_at": -1, "allowed": [token id, ...]}]}]}
//
// rejected_at is the index of the first token of a walk the matcher refused (-1: none);
// allowed is the token ids the matcher's bitmask allows after the whole walk.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

// The bundle is UMD inside a "type": "module" package: its Emscripten loader calls
// require and reads __filename, and with no CommonJS exports it attaches itself to
// globalThis.xgrammar.
globalThis.require = createRequire(import.meta.url);
globalThis.__filename = fileURLToPath(import.meta.url);
await import("@mlc-ai/web-xgrammar");
const xg = globalThis.xgrammar;

const version = JSON.parse(
  readFileSync(new URL("node_modules/@mlc-ai/web-xgrammar/package.json", import.meta.url), "utf8"),
).version;

const request = JSON.parse(readFileSync(0, "utf8"));

// One compiler per vocabulary, shared by the cases that use it.
const compilers = new Map();
async function compilerFor(vocab, stop) {
  const key = JSON.stringify([vocab, stop]);
  let c = compilers.get(key);
  if (!c) {
    const info = await xg.TokenizerInfo.createTokenizerInfo(vocab, "raw", false, vocab.length, stop);
    c = { info, compiler: await xg.GrammarCompiler.createGrammarCompiler(info) };
    compilers.set(key, c);
  }
  return c;
}

// message says why xgrammar refused a tag. Its C++ exceptions reach JavaScript as a bare
// pointer: the WASM build exports no helper to read their what().
function message(e) {
  if (typeof e === "number") {
    return `xgrammar threw a C++ exception (pointer ${e}; the WASM build keeps no message)`;
  }
  return e instanceof Error ? e.message : String(e);
}

// textCompiler compiles for whole-string checks: an empty vocabulary and no cache, as
// Testings.isGrammarAcceptString does on every call; here once per tag.
const textCompiler = await xg.GrammarCompiler.createGrammarCompiler(
  await xg.TokenizerInfo.createTokenizerInfo([]),
  false,
);

// accepts is Testings.isGrammarAcceptString's check (a matcher that may end without a
// stop token takes the whole string, then must be able to end there) on a grammar
// compiled once.
async function accepts(compiled, s) {
  const m = await xg.GrammarMatcher.createGrammarMatcher(compiled, undefined, true);
  try {
    return m._acceptString(s) && m.isTerminated();
  } finally {
    m.dispose();
  }
}

async function check(c) {
  const out = { error: "", accepted: [], walks: [] };
  let grammar;
  try {
    grammar = await xg.Grammar.fromStructuralTag(c.tag);
  } catch (e) {
    out.error = message(e) || "compile failed";
    return out;
  }
  try {
    const compiled = await textCompiler.compileGrammar(grammar);
    try {
      for (const s of c.outputs ?? []) {
        out.accepted.push(await accepts(compiled, s));
      }
    } finally {
      compiled.dispose();
    }
  } finally {
    grammar.dispose();
  }
  if (!c.walks?.length) {
    return out;
  }
  const { compiler } = await compilerFor(c.vocab, c.stop ?? []);
  const compiled = await compiler.compileStructuralTag(c.tag);
  try {
    for (const walk of c.walks) {
      const m = await xg.GrammarMatcher.createGrammarMatcher(compiled);
      try {
        let rejectedAt = -1;
        for (let i = 0; i < walk.length; i++) {
          if (!m.acceptToken(walk[i])) {
            rejectedAt = i;
            break;
          }
        }
        const allowed = [];
        if (rejectedAt < 0) {
          const mask = await m.getNextTokenBitmask();
          for (let id = 0; id < c.vocab.length; id++) {
            if ((mask[id >> 5] >>> (id & 31)) & 1) {
              allowed.push(id);
            }
          }
        }
        out.walks.push({ rejected_at: rejectedAt, allowed });
      } finally {
        m.dispose();
      }
    }
  } finally {
    compiled.dispose();
  }
  return out;
}

const results = [];
for (const c of request.cases) {
  results.push(await check(c));
}
process.stdout.write(JSON.stringify({ version, results }));
