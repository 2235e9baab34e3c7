/**
 * The one place that names the MCP SDK. Full `npm:` specifiers (not bare
 * names from deno.json) so `deno run <url>` of a remote checkout resolves them
 * too; the exact version is pinned here and recorded in deno.lock. The
 * `@ts-types` lines point the type checker at the package's declarations,
 * which its `./*` export pattern does not find for `*.js` subpaths.
 */
export { Server } from "npm:@modelcontextprotocol/sdk@1.32.2/server";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/types"
export {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  JSONRPCMessageSchema,
  LATEST_PROTOCOL_VERSION,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "npm:@modelcontextprotocol/sdk@1.32.2/types.js";
export type {
  CallToolResult,
  JSONRPCMessage,
  Tool,
} from "npm:@modelcontextprotocol/sdk@1.32.2/types";
export type { Transport } from "npm:@modelcontextprotocol/sdk@1.32.2/shared/transport";
