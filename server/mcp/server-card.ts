/**
 * The MCP server card (SEP-2127) at `/.well-known/mcp/server-card.json`: what a registry or a
 * client learns of `/mcp` before it connects. Every fact in it comes from where the server itself
 * takes it: the address and the OAuth side from the protected-resource metadata (RFC 9728, the
 * same object `/.well-known/oauth-protected-resource` serves), the capabilities and description
 * from the MCP server (server.ts), the tools from the registry's tool list (`tools/list` for an API
 * key, which holds every scope). Nothing is listed twice.
 */
import { isIP } from 'node:net';
import type { ProtectedResourceMetadata } from '../auth/resource-metadata.ts';
import { tools } from '../tools/tools.ts';
import { INSTRUCTIONS, MODERN_CAPABILITIES } from './server.ts';

export const SERVER_CARD_PATH = '/.well-known/mcp/server-card.json';

/** The protocol revisions `/mcp` serves from one endpoint (route.ts routes each request by its own). */
export const PROTOCOL_REVISIONS = ['2025-11-25', '2026-07-28'] as const;

export function serverCard(resource: ProtectedResourceMetadata, resourceMetadataUrl: string, version: string) {
  const mcpUrl = new URL(resource.resource);
  const oauth = resource.authorization_servers !== undefined;
  return {
    $schema: 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json',
    // Reverse-DNS, as the card names servers: api.example.com's is com.example.api/prospecta.
    name: `${reverseDns(mcpUrl.hostname)}/${resource.resource_name}`,
    version,
    title: resource.resource_name,
    description: INSTRUCTIONS,
    websiteUrl: mcpUrl.origin,
    remotes: [
      {
        type: 'streamable-http',
        url: resource.resource,
        supportedProtocolVersions: [...PROTOCOL_REVISIONS],
        headers: [
          {
            name: 'Authorization',
            description: `Bearer and a workspace API key (service_live_…, made on the dashboard)${oauth ? ', or an OAuth access token of the authorization server the protected-resource metadata names' : ''}.`,
            isRequired: true,
            isSecret: true,
          },
        ],
        authentication: { required: true, schemes: oauth ? ['bearer', 'oauth2'] : ['bearer'] },
      },
    ],
    capabilities: MODERN_CAPABILITIES,
    tools: [...tools.values()].map((tool) => tool.definition),
    _meta: {
      // Where an OAuth client starts (RFC 9728), and what it would find there.
      'prospecta/oauth': {
        protectedResourceMetadata: resourceMetadataUrl,
        ...(oauth ? { authorizationServers: resource.authorization_servers } : {}),
        scopesSupported: resource.scopes_supported,
      },
    },
  };
}

function reverseDns(hostname: string): string {
  const host = hostname.replace(/^\[|\]$/g, '');
  return isIP(host) ? host : host.split('.').reverse().join('.');
}
