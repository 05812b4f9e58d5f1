// The servers ../mcp/dump.mjs dumps into this directory, and the placeholder credentials
// they need to start and list their tools.
export const env = {
  GITHUB_PERSONAL_ACCESS_TOKEN: "x", GITLAB_PERSONAL_ACCESS_TOKEN: "x", SLACK_BOT_TOKEN: "x",
  SLACK_TEAM_ID: "x", GOOGLE_MAPS_API_KEY: "x", BRAVE_API_KEY: "x",
  AMAP_MAPS_API_KEY: "x", BAIDU_MAP_API_KEY: "x",
  OPENAPI_MCP_HEADERS: '{"Authorization":"Bearer x","Notion-Version":"2022-06-28"}',
};
// server name (the tools' prefix): package, entry point, arguments
export const servers = {
  amap: ["@amap/amap-maps-mcp-server", "build/index.js", []],
  "baidu-map": ["@baidumap/mcp-server-baidu-map", "dist/index.js", []],
  chart: ["@antv/mcp-server-chart", "build/index.js", []],
  howtocook: ["howtocook-mcp", "build/index.js", []],
  tosspayments: ["@tosspayments/integration-guide-mcp", "dist/server.js", []],
};
