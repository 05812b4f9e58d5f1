// Regenerates this directory's tools files from the servers' npm packages (the same
// script as ../mcp/dump.mjs, with other servers):
//
//	mkdir /tmp/mcpcat && cd /tmp/mcpcat && npm init -y
//	npm install --ignore-scripts @modelcontextprotocol/sdk PACKAGE...   # see README.md
//	node /path/to/bench/retrieval/testdata/mcp/dump.mjs /path/to/bench/retrieval/testdata/mcp
//
// Run it from the directory the packages were installed in. Each server is started over
// stdio with placeholder credentials and asked for tools/list; nothing else is called.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

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
const env = {
  ...process.env,
  GITHUB_PERSONAL_ACCESS_TOKEN: "x", GITLAB_PERSONAL_ACCESS_TOKEN: "x", SLACK_BOT_TOKEN: "x",
  SLACK_TEAM_ID: "x", GOOGLE_MAPS_API_KEY: "x", BRAVE_API_KEY: "x",
  AMAP_MAPS_API_KEY: "x", BAIDU_MAP_API_KEY: "x",
  OPENAPI_MCP_HEADERS: '{"Authorization":"Bearer x","Notion-Version":"2022-06-28"}',
};
// server name (the tools' prefix): package, entry point, arguments
const servers = {
  amap: ["@amap/amap-maps-mcp-server", "build/index.js", []],
  "baidu-map": ["@baidumap/mcp-server-baidu-map", "dist/index.js", []],
  chart: ["@antv/mcp-server-chart", "build/index.js", []],
  howtocook: ["howtocook-mcp", "build/index.js", []],
  tosspayments: ["@tosspayments/integration-guide-mcp", "dist/server.js", []],
};
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
