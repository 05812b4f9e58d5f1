// Regenerates a catalog directory's tools files (../mcp/, ../mcp_cjk/) from the servers'
// npm packages that its servers.mjs lists, with the placeholder credentials it gives:
//
//	mkdir /tmp/mcpcat && cd /tmp/mcpcat && npm init -y
//	npm install --ignore-scripts @modelcontextprotocol/sdk PACKAGE...   # see its README.md
//	node /path/to/bench/retrieval/testdata/mcp/dump.mjs /path/to/bench/retrieval/testdata/mcp
//
// Run it from the directory the packages were installed in. Each server is started over
// stdio with placeholder credentials and asked for tools/list; nothing else is called.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

// The packages are resolved from the current directory, not from this file's.
const require = createRequire(path.resolve("package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

const out = process.argv[2];
if (!out) {
  console.error("usage: node dump.mjs OUTDIR");
  process.exit(2);
}
const nm = path.resolve("node_modules");
// servers: server name (the tools' prefix) -> [package, entry point, arguments]
const { env: extraEnv, servers } = await import(pathToFileURL(path.resolve(out, "servers.mjs")).href);
const env = { ...process.env, ...extraEnv };
let failed = false;
for (const [server, [pkg, entry, args]] of Object.entries(servers)) {
  const { version } = JSON.parse(fs.readFileSync(path.join(nm, pkg, "package.json")));
  const transport = new StdioClientTransport({
    command: process.execPath, args: [path.join(nm, pkg, entry), ...args], env, stderr: "ignore",
  });
  const client = new Client({ name: "maskgate-retrieval-dump", version: "1" });
  try {
    await client.connect(transport);
    const tools = [];
    let cursor;
    do {
      const res = await client.listTools(cursor ? { cursor } : {});
      tools.push(...res.tools);
      cursor = res.nextCursor;
    } while (cursor);
    // As the gateway's MCP client (toolsearch/mcp) makes them: the description, or
    // failing that a title; the titles as keywords; the server as the category.
    const lines = tools.map((t) => {
      const titles = [t.title, t.annotations?.title];
      const keywords = [];
      for (const k of titles) {
        if (k && k !== t.description && !keywords.includes(k)) keywords.push(k);
      }
      return JSON.stringify({
        type: "function",
        function: {
          name: `${server}_${t.name}`,
          description: t.description || titles.find((k) => k) || "",
          parameters: t.inputSchema ?? { type: "object" },
        },
        ...(keywords.length ? { keywords } : {}),
        category: server,
      });
    });
    fs.writeFileSync(path.join(out, `${server}.json`), "[\n" + lines.join(",\n") + "\n]\n");
    console.log(`| ${server} | ${pkg} | ${version} | ${tools.length} |`);
  } catch (e) {
    console.error(`${server}: ${e.message}`);
    failed = true;
  }
  await client.close().catch(() => {});
}
process.exit(failed ? 1 : 0);
