/**
 * Every environment variable prospecta reads, parsed and validated in one place. Each has a
 * working default so `npm start` needs none; a malformed value stops start-up with a message
 * naming the variable rather than surfacing later as a strange runtime error.
 *
 * A leaf: it imports nothing of the tree, so reading a setting never loads a provider or a
 * store. The per-provider variables are named by each provider's declaration, so they are read
 * with these same parsers by `providers/settings.ts`; the start-up hands every adapter the slice
 * of this it uses (`config.llm`, `config.webSearch`, the provider settings…), never the whole.
 */
/** The Receita's Nextcloud share of the monthly releases (since about Feb 2026), and the tax-regime folder. */
const CNPJ_RELEASES_URL = 'https://arquivos.receitafederal.gov.br/index.php/s/YggdBLfdninEJX9';
const CNPJ_TAX_REGIMES_URL = 'https://arquivos.receitafederal.gov.br/dados/cnpj/regime_tributario/';
/** BrasilAPI's public instance, answering CNPJ lookups the imported registry lacks. */
const BRASILAPI_URL = 'https://brasilapi.com.br';

export interface Config {
  port: number;
  host: string;
  /** The address clients reach the service at, without a trailing slash: every absolute URL it serves starts with it. */
  publicUrl: string;
  /** Origins besides PUBLIC_URL's whose pages may call /mcp (MCP_ALLOWED_ORIGINS), each as `scheme://host[:port]`. */
  mcpAllowedOrigins: string[];
  dataDir: string;
  mongodbUri: string | undefined;
  redisUrl: string | undefined;
  llm: LlmConfig;
  agent: AgentLimits;
  webSearch: WebSearchConfig;
  /** Lets research read pages on loopback addresses (tests); off by default. */
  webAllowLoopback: boolean;
  /** Background jobs (server/jobs): how often a runner looks for work, how many items it runs at once, webhooks. */
  jobs: {
    pollMs: number;
    concurrency: number;
    webhookTimeoutMs: number;
    /** WEBHOOK_ALLOW_PRIVATE: webhooks may use http: and private or loopback addresses (tests, private networks). */
    webhookAllowPrivate: boolean;
  };
  /** IDEMPOTENCY_LEASE_SECONDS: how long a dead process's claim on an Idempotency-Key blocks its retries (MongoDB). */
  idempotencyLeaseMs: number;
  rateLimitPerMinute: number;
  campaignMaxProspects: number;
  /** Synthetic registry companies (establishments) the demo data imports on an empty store. */
  demoSeedCompanies: number;
  /** The external authorization server whose JWT access tokens are accepted; unset: API keys only. */
  oauth: OAuthConfig;
  logLevel: string;
  /** NODE_ENV=production: no demo data is loaded, and no key or sign-in link is printed or logged. */
  production: boolean;
  /**
   * TRUST_PROXY=true: the client's address (rate limits without a credential, logs) is the last
   * one X-Forwarded-For names, the one the proxy in front saw; off, it is the socket's peer.
   */
  trustProxy: boolean;
  /** The bearer token `GET /metrics` asks for; unset: no metrics endpoint (404). */
  metricsToken: string | undefined;
  /** Seconds a cached API-key lookup may serve before re-reading the store (see docs/architecture.md). */
  keyCacheSeconds: number;
  /** BrasilAPI answers CNPJ lookups the imported registry lacks; off unless asked for. */
  brasilApi: { enabled: boolean; url: string; lookupsPerRequest: number };
  /** Where `download cnpj` finds the Receita's releases and tax-regime files (issue 22). */
  cnpjReleases: { url: string; taxRegimesUrl: string; stallMs: number; parallel: number };
  /**
   * PROVIDER_MAX_PAUSE_SECONDS: the longest a provider's `Retry-After` may pause every call made
   * with one key (a longer one is cut to it), so one answer cannot switch a provider off.
   */
  providerMaxPauseSeconds: number;
  /** Encrypts workspaces' own provider keys at rest: 32 bytes, hex or base64 (PROVIDER_KEY_SECRET). */
  providerKeySecret: Buffer | undefined;
  /**
   * The variables this was read from: the providers' own (`HUNTER_API_KEY`, `HUNTER_COST`…) are
   * named by their declarations and read from here (`providers/settings.ts`).
   */
  env: Env;
}

export interface LlmConfig {
  baseUrl: string | undefined;
  apiKey: string | undefined;
  model: string | undefined;
  timeoutMs: number;
  maxConcurrent: number;
  perMinute: number | undefined;
  maxPromptTokens: number;
}

/** The built-in agent: tool calls per message, and messages a day for a workspace without a plan. */
export interface AgentLimits {
  maxSteps: number;
  freeMessagesPerDay: number;
}

/** Web search for research: SearXNG when its URL is set, else Brave with its key. */
export interface WebSearchConfig {
  searxngUrl: string | undefined;
  braveApiKey: string | undefined;
  braveUrl: string;
}

export interface OAuthConfig {
  issuer: string | undefined;
  audience: string;
  jwksUrl: string | undefined;
  autoSignup: boolean;
  /** How long one fetch of the issuer's metadata or keys may take (OAUTH_FETCH_TIMEOUT_MS). */
  fetchTimeoutMs: number;
  /** The dashboard's own client at the issuer ("Sign in with …"); unset: one-time links only. */
  clientId: string | undefined;
  clientSecret: string | undefined;
}

export class ConfigError extends Error {}

export type Env = Record<string, string | undefined>;

export function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
  }
  return value;
}

const TRUE = ['true', '1', 'yes'];
const FALSE = ['false', '0', 'no'];

export function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (TRUE.includes(raw)) return true;
  if (FALSE.includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false (got "${raw}")`);
}

export function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL (got a value that does not parse)`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')} (got ${parsed.protocol})`);
  }
  return raw;
}

function secret(env: Env, name: string): Buffer | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  const bytes = /^[0-9a-f]{64}$/i.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (bytes.length !== 32) throw new ConfigError(`${name} must be 32 bytes, as 64 hex digits or base64`);
  return bytes;
}

/** A comma-separated list of web origins, each normalized as a browser sends it in `Origin`. */
function origins(env: Env, name: string): string[] {
  const raw = text(env, name);
  if (raw === undefined) return [];
  return raw.split(',').map((item) => item.trim()).filter(Boolean).map((item) => {
    let parsed: URL;
    try {
      parsed = new URL(item);
    } catch {
      throw new ConfigError(`${name} must list origins such as https://app.example.com, comma-separated (got "${item}")`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(`${name}: ${item} must use http: or https:`);
    if (parsed.pathname !== '/' || parsed.search || parsed.hash || parsed.username) throw new ConfigError(`${name}: ${item} must be an origin alone (scheme, host and port), without a path`);
    return parsed.origin;
  });
}

/** A bearer token: at least 16 visible characters, so a guessable one is refused at start-up. */
function token(env: Env, name: string): string | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  if (!/^[\x21-\x7e]{16,512}$/.test(raw)) {
    throw new ConfigError(`${name} must be 16 to 512 visible ASCII characters, without spaces (e.g. openssl rand -hex 32)`);
  }
  return raw;
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const publicUrl = (url(env, 'PUBLIC_URL', ['http:', 'https:']) ?? `http://localhost:${port}`).replace(/\/+$/, '');
  return {
    port,
    publicUrl,
    mcpAllowedOrigins: origins(env, 'MCP_ALLOWED_ORIGINS'),
    host: text(env, 'HOST') ?? '0.0.0.0',
    dataDir: text(env, 'DATA_DIR') ?? './data',
    mongodbUri: url(env, 'MONGODB_URI', ['mongodb:', 'mongodb+srv:']),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    llm: {
      baseUrl: url(env, 'LLM_BASE_URL', ['http:', 'https:']),
      apiKey: text(env, 'LLM_API_KEY'),
      model: text(env, 'LLM_MODEL'),
      timeoutMs: integer(env, 'LLM_TIMEOUT_MS', 60_000, 1000, 600_000),
      maxConcurrent: integer(env, 'LLM_MAX_CONCURRENT', 10, 1, 10_000),
      perMinute: text(env, 'LLM_RATE_PER_MINUTE') === undefined ? undefined : integer(env, 'LLM_RATE_PER_MINUTE', 0, 1, 10_000_000),
      maxPromptTokens: integer(env, 'LLM_MAX_PROMPT_TOKENS', 16_000, 1000, 2_000_000),
    },
    agent: {
      maxSteps: integer(env, 'AGENT_MAX_STEPS', 8, 1, 100),
      freeMessagesPerDay: integer(env, 'AGENT_FREE_MESSAGES_PER_DAY', 20, 0, 1_000_000),
    },
    webSearch: {
      searxngUrl: url(env, 'SEARXNG_URL', ['http:', 'https:']),
      braveApiKey: text(env, 'BRAVE_SEARCH_API_KEY'),
      braveUrl: url(env, 'BRAVE_SEARCH_URL', ['http:', 'https:']) ?? 'https://api.search.brave.com',
    },
    webAllowLoopback: flag(env, 'WEB_FETCH_ALLOW_LOOPBACK', false),
    jobs: {
      pollMs: integer(env, 'JOBS_POLL_MS', 1000, 10, 60_000),
      concurrency: integer(env, 'JOBS_CONCURRENCY', 16, 1, 256),
      webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
      webhookAllowPrivate: flag(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    },
    idempotencyLeaseMs: integer(env, 'IDEMPOTENCY_LEASE_SECONDS', 60, 3, 3600) * 1000,
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 600, 1, 10_000_000),
    campaignMaxProspects: integer(env, 'CAMPAIGN_MAX_PROSPECTS', 1000, 1, 10_000_000),
    // Imports in about a second, and every search filter finds something.
    demoSeedCompanies: integer(env, 'DEMO_SEED_COMPANIES', 5_000, 1, 10_000_000),
    oauth: {
      // Kept exactly as written (a trailing slash included): a token's `iss` must equal it.
      issuer: url(env, 'OAUTH_ISSUER', ['https:', 'http:']),
      audience: text(env, 'OAUTH_AUDIENCE') ?? `${publicUrl}/mcp`,
      jwksUrl: url(env, 'OAUTH_JWKS_URL', ['http:', 'https:']),
      autoSignup: flag(env, 'OAUTH_AUTO_SIGNUP', true),
      fetchTimeoutMs: integer(env, 'OAUTH_FETCH_TIMEOUT_MS', 5_000, 100, 60_000),
      clientId: text(env, 'OAUTH_CLIENT_ID'),
      clientSecret: text(env, 'OAUTH_CLIENT_SECRET'),
    },
    logLevel: text(env, 'LOG_LEVEL') ?? 'info',
    production: text(env, 'NODE_ENV') === 'production',
    trustProxy: flag(env, 'TRUST_PROXY', false),
    metricsToken: token(env, 'METRICS_TOKEN'),
    keyCacheSeconds: integer(env, 'KEY_CACHE_SECONDS', 5, 0, 3600),
    providerMaxPauseSeconds: integer(env, 'PROVIDER_MAX_PAUSE_SECONDS', 300, 1, 86_400),
    providerKeySecret: secret(env, 'PROVIDER_KEY_SECRET'),
    env,
    brasilApi: {
      enabled: flag(env, 'BRASILAPI_ENABLED', false),
      url: url(env, 'BRASILAPI_URL', ['http:', 'https:']) ?? BRASILAPI_URL,
      lookupsPerRequest: integer(env, 'BRASILAPI_LOOKUPS_PER_REQUEST', 10, 0, 500),
    },
    cnpjReleases: {
      url: url(env, 'CNPJ_RELEASES_URL', ['http:', 'https:']) ?? CNPJ_RELEASES_URL,
      // An empty value downloads the release without the tax-regime files.
      taxRegimesUrl: env.CNPJ_TAX_REGIMES_URL === '' ? '' : (url(env, 'CNPJ_TAX_REGIMES_URL', ['http:', 'https:']) ?? CNPJ_TAX_REGIMES_URL),
      stallMs: integer(env, 'CNPJ_DOWNLOAD_STALL_MS', 60_000, 100, 3_600_000),
      parallel: integer(env, 'CNPJ_DOWNLOAD_PARALLEL', 3, 1, 16),
    },
  };
}
