/** The MCP SDK's server package, as the route loads it on the first MCP request (see route.ts). */
export type Sdk = typeof import('@modelcontextprotocol/server');
