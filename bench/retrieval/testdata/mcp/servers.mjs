// The servers ../mcp/dump.mjs dumps into this directory, and the placeholder credentials
// they need to start and list their tools.
export const env = {
  GITHUB_PERSONAL_ACCESS_TOKEN: "x", GITLAB_PERSONAL_ACCESS_TOKEN: "x", SLACK_BOT_TOKEN: "x",
  SLACK_TEAM_ID: "x", GOOGLE_MAPS_API_KEY: "x", BRAVE_API_KEY: "x",
  OPENAPI_MCP_HEADERS: '{"Authorization":"Bearer x","Notion-Version":"2022-06-28"}',
};
// server name (the tools' prefix): package, entry point, arguments
export const servers = {
  "brave-search": ["@modelcontextprotocol/server-brave-search", "dist/index.js", []],
  everything: ["@modelcontextprotocol/server-everything", "dist/index.js", ["stdio"]],
  filesystem: ["@modelcontextprotocol/server-filesystem", "dist/index.js", ["/tmp"]],
  github: ["@modelcontextprotocol/server-github", "dist/index.js", []],
  gitlab: ["@modelcontextprotocol/server-gitlab", "dist/index.js", []],
  "google-maps": ["@modelcontextprotocol/server-google-maps", "dist/index.js", []],
  memory: ["@modelcontextprotocol/server-memory", "dist/index.js", []],
  notion: ["@notionhq/notion-mcp-server", "bin/cli.mjs", []],
  playwright: ["@playwright/mcp", "cli.js", []],
  postgres: ["@modelcontextprotocol/server-postgres", "dist/index.js", ["postgresql://localhost/x"]],
  puppeteer: ["@modelcontextprotocol/server-puppeteer", "dist/index.js", []],
  "sequential-thinking": ["@modelcontextprotocol/server-sequential-thinking", "dist/index.js", []],
  slack: ["@modelcontextprotocol/server-slack", "dist/index.js", []],
};
