/**
 * The protected-resource metadata of RFC 9728: what an OAuth client reads, after a 401 names it
 * in `WWW-Authenticate`, to learn which authorization server issues tokens for this service and
 * which scopes to ask for. Served at `/.well-known/oauth-protected-resource` and at
 * `…/oauth-protected-resource/mcp` (RFC 9728 §3.1's address for the resource `{PUBLIC_URL}/mcp`);
 * both describe that one resource, as decisions.md says.
 */
import { SCOPES } from '../../shared/operations/types.ts';

export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers?: string[];
  scopes_supported: string[];
  bearer_methods_supported: string[];
  resource_name: string;
  resource_documentation: string;
}

/** `issuer`: OAUTH_ISSUER, the one authorization server whose tokens are accepted, if any. */
export function protectedResourceMetadata(publicUrl: string, issuer: string | undefined): ProtectedResourceMetadata {
  return {
    resource: `${publicUrl}/mcp`,
    // Absent, not empty, without an issuer: clients then know only API keys work.
    ...(issuer ? { authorization_servers: [issuer] } : {}),
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'prospecta',
    resource_documentation: `${publicUrl}/openapi.json`,
  };
}

/** The address every `WWW-Authenticate` of a 401 or 403 names as `resource_metadata`. */
export function resourceMetadataUrl(publicUrl: string): string {
  return `${publicUrl}${RESOURCE_METADATA_PATH}`;
}
