// The servers ../mcp/dump.mjs dumps into this directory, and the placeholder credentials
// they need to start and list their tools.
export const env = {
  CHATWORK_API_TOKEN: "x", BACKLOG_DOMAIN: "example.backlog.jp", BACKLOG_API_KEY: "x",
  FREEE_CLIENT_ID: "x", FREEE_CLIENT_SECRET: "x", CHANNEL_ACCESS_TOKEN: "x", DESTINATION_USER_ID: "x",
};
// server name (the tools' prefix): package, entry point, arguments
export const servers = {
  backlog: ["backlog-mcp-server", "build/index.js", []],
  chatwork: ["@chatwork/mcp-server", "dist/index.js", []],
  freee: ["freee-mcp", "bin/freee-mcp.js", []],
  line: ["@line/line-bot-mcp-server", "dist/index.js", []],
  stock: ["stock-sdk", "dist/cli.js", ["mcp"]],
  "universal-db": ["universal-db-mcp", "dist/index.js", []],
};
