/**
 * Why an access token was refused, as a short reason code for the log and a sentence for the
 * client. Neither ever quotes the token or its claims: the log line says `reason: "expired"`,
 * which is enough to debug a client without leaking a bearer credential into log storage.
 */
export type TokenRefusalReason =
  | 'malformed'
  | 'wrong_type'
  | 'alg_not_allowed'
  | 'bad_signature'
  | 'unknown_kid'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'claims_invalid'
  | 'issuer_unavailable'
  | 'keys_unavailable'
  | 'verification_failed';

const MESSAGES: Record<TokenRefusalReason, string> = {
  malformed: 'The access token is not a well-formed JWT.',
  wrong_type: 'The token is not an access token (its typ header says otherwise).',
  alg_not_allowed: 'The access token is signed with an algorithm this service does not accept (RS256, PS256, ES256, EdDSA).',
  bad_signature: 'The access token’s signature is invalid.',
  unknown_kid: 'The access token is signed with a key its issuer does not publish.',
  expired: 'The access token has expired.',
  not_yet_valid: 'The access token is not valid yet.',
  wrong_issuer: 'The access token was not issued by the authorization server this service trusts.',
  wrong_audience: 'The access token is not meant for this service (audience).',
  claims_invalid: 'The access token lacks a required claim or has an invalid one (sub, exp).',
  issuer_unavailable: 'The access token could not be checked: the authorization server’s metadata is unavailable. Try again shortly.',
  keys_unavailable: 'The access token could not be checked: the authorization server’s keys are unavailable. Try again shortly.',
  verification_failed: 'The access token could not be checked.',
};

export class TokenRefused extends Error {
  override readonly name = 'TokenRefused';

  constructor(readonly reason: TokenRefusalReason) {
    super(MESSAGES[reason]);
  }
}

/** The reason for an error jose threw while verifying; null for an error that is not jose's verdict. */
export function reasonOf(err: unknown): TokenRefusalReason | null {
  const { code, claim } = (err ?? {}) as { code?: string; claim?: string };
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return 'expired';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (claim === 'nbf') return 'not_yet_valid';
      if (claim === 'iss') return 'wrong_issuer';
      if (claim === 'aud') return 'wrong_audience';
      return 'claims_invalid';
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'alg_not_allowed';
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'bad_signature';
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return 'unknown_kid';
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
    case 'ERR_JOSE_NOT_SUPPORTED':
      return 'malformed';
    default:
      return null;
  }
}
