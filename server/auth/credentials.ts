/**
 * Turns a bearer credential into a principal, for every binding (HTTP and MCP through the same
 * `identify` middleware). A credential that starts with `service_live_` is an API key, checked
 * exactly as before; anything else, when an issuer is configured, is tried as an OAuth access
 * token; without one, it is simply a wrong key.
 *
 * An OAuth principal's `credentialId` is a hash of its subject (`VerifiedToken.subjectId`),
 * stable across its tokens, so the rate limit counts per subject and logs carry no e-mail
 * address or directory id.
 */
import type { AccessTokens } from './access-tokens.ts';
import { KEY_PREFIX } from './key-format.ts';
import type { ApiKeys } from './keys.ts';
import type { Principal, Refusal } from '../invocation/caller.ts';
import type { Subjects } from './subjects.ts';
import { TokenRefused, type TokenRefusalReason } from './token-refusal.ts';

export type Identification =
  | { principal: Principal }
  /** `reason`: for tokens, a code the caller may log (never the token). */
  | { refused: Refusal; reason?: TokenRefusalReason | 'no_workspace' };

export interface OAuth {
  tokens: AccessTokens;
  subjects: Subjects;
}

const BAD_KEY: Refusal = { code: 'unauthorized', message: 'The API key is invalid or has been revoked.' };

export class Credentials {
  constructor(
    private readonly keys: ApiKeys,
    private readonly oauth: OAuth | null,
  ) {}

  async identify(bearer: string): Promise<Identification> {
    if (bearer.startsWith(KEY_PREFIX) || !this.oauth) return this.apiKey(bearer);
    return this.token(bearer, this.oauth);
  }

  private async apiKey(bearer: string): Promise<Identification> {
    const key = await this.keys.authenticate(bearer);
    if (!key) return { refused: BAD_KEY };
    return { principal: { kind: 'api_key', credentialId: key._id, workspaceId: key.workspaceId, scopes: key.scopes } };
  }

  private async token(bearer: string, { tokens, subjects }: OAuth): Promise<Identification> {
    let token;
    try {
      token = await tokens.verify(bearer);
    } catch (err) {
      if (err instanceof TokenRefused) return { refused: { code: 'unauthorized', message: err.message }, reason: err.reason };
      throw err;
    }
    const workspace = await subjects.workspaceOf(token);
    if (typeof workspace !== 'string') return { refused: workspace, reason: 'no_workspace' };
    return {
      principal: {
        kind: 'oauth',
        credentialId: token.subjectId,
        workspaceId: workspace,
        scopes: token.scopes,
      },
    };
  }
}
