/**
 * The little of oidc-provider's API the tests use. The package ships no types, and
 * @types/oidc-provider (maintained separately) is not a dependency; these few lines keep the
 * tests' authorization server type-checked without it.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface ProviderConfiguration {
    [option: string]: unknown;
    features?: Record<string, unknown>;
    findAccount?: (ctx: unknown, sub: string) => unknown;
    extraTokenClaims?: (ctx: unknown, token: unknown) => unknown;
  }

  export default class Provider {
    constructor(issuer: string, configuration?: ProviderConfiguration);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<{ uid: string; prompt: { name: string }; params: Record<string, unknown> }>;
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
  }
}
