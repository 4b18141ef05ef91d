/**
 * BrasilAPI's CNPJ lookup (public, keyless): a pass-through to minha-receita, so the body is
 * minha-receita's JSON. Lookups go through its {@link OutboundClient}: every attempt, retries
 * included, waits for BrasilAPI's limiter.
 */
import type Bottleneck from 'bottleneck';
import { OutboundClient, type OutboundClientOptions } from '../outbound/client.ts';
import { readCapped } from '../outbound/read-capped.ts';
import type { DeclaredLimits } from '../outbound/limiter.ts';
import type { Attempt, AttemptFailure } from '../outbound/retry.ts';
import { retryAfterMs } from '../outbound/retry-after.ts';
import type { Maybe } from '../lib/maybe.ts';
import { VERSION } from '../lib/version.ts';
import type { TraceContext } from '../lib/trace-context.ts';
import { REGISTRATION_STATUSES, STORED_FISCAL_SIZES } from '../../shared/schemas/registry.ts';
import type { CodeAndDescription, CompanyRecord, RegistrationStatus } from '../companies/company-record.ts';
import type { PhoneNumber, TaxOption } from '../../shared/types.ts';
import { AGE_BAND_CODES, COMPANY_SIZE_CODES, PARTNER_TYPE_CODES, type FixedCodeTable } from '../../shared/registry-codes.ts';
import { cleanText } from './clean-text.ts';

export const BRASILAPI_URL = 'https://brasilapi.com.br';

/**
 * BrasilAPI publishes no limit; its maintainers have quoted 100 calls a minute and 3 a second
 * per IP, and users report 429s at one call every 1–3 s. One call a second, one at a time.
 * `maxQueued` keeps the queue within what one instance can serve inside the default 30 s wait.
 */
export const BRASILAPI_LIMITS: DeclaredLimits = { perSecond: 1, maxConcurrent: 1, maxQueued: 20 };

const PROVIDER = 'BrasilAPI';
/**
 * Far beyond any company minha-receita publishes (a few kilobytes, long partner lists included):
 * a larger answer is broken or hostile, and is refused before it fills memory.
 */
const MAX_BODY_BYTES = 1024 * 1024;
/** Its edge answers 403 to Node's default User-Agent and 429 to none (BrasilAPI #826, #835). */
const USER_AGENT = `prospecta/${VERSION} (+https://github.com/prospecta)`;

export interface BrasilApiPartner {
  identificador_de_socio?: Maybe<number>;
  nome_socio?: Maybe<string>;
  cnpj_cpf_do_socio?: Maybe<string>;
  codigo_qualificacao_socio?: Maybe<number>;
  qualificacao_socio?: Maybe<string>;
  data_entrada_sociedade?: Maybe<string>;
  codigo_pais?: Maybe<number>;
  pais?: Maybe<string>;
  cpf_representante_legal?: Maybe<string>;
  nome_representante_legal?: Maybe<string>;
  codigo_qualificacao_representante_legal?: Maybe<number>;
  qualificacao_representante_legal?: Maybe<string>;
  codigo_faixa_etaria?: Maybe<number>;
  faixa_etaria?: Maybe<string>;
}

/** A `GET /api/cnpj/v1/{cnpj}` body: minha-receita's fields, any of them null or missing but `cnpj`. */
export interface BrasilApiCompany {
  cnpj: string;
  identificador_matriz_filial?: Maybe<number>;
  descricao_identificador_matriz_filial?: Maybe<string>;
  nome_fantasia?: Maybe<string>;
  situacao_cadastral?: Maybe<number>;
  descricao_situacao_cadastral?: Maybe<string>;
  data_situacao_cadastral?: Maybe<string>;
  motivo_situacao_cadastral?: Maybe<number>;
  descricao_motivo_situacao_cadastral?: Maybe<string>;
  nome_cidade_no_exterior?: Maybe<string>;
  codigo_pais?: Maybe<number>;
  pais?: Maybe<string>;
  data_inicio_atividade?: Maybe<string>;
  /** A number: codes starting with 0 lose it (0111301 arrives as 111301). */
  cnae_fiscal?: Maybe<number>;
  cnae_fiscal_descricao?: Maybe<string>;
  descricao_tipo_de_logradouro?: Maybe<string>;
  logradouro?: Maybe<string>;
  numero?: Maybe<string>;
  complemento?: Maybe<string>;
  bairro?: Maybe<string>;
  cep?: Maybe<string>;
  uf?: Maybe<string>;
  /** Receita's 4-digit code, as a number. */
  codigo_municipio?: Maybe<number>;
  codigo_municipio_ibge?: Maybe<number>;
  municipio?: Maybe<string>;
  ddd_telefone_1?: Maybe<string>;
  ddd_telefone_2?: Maybe<string>;
  ddd_fax?: Maybe<string>;
  email?: Maybe<string>;
  situacao_especial?: Maybe<string>;
  data_situacao_especial?: Maybe<string>;
  opcao_pelo_simples?: Maybe<boolean>;
  data_opcao_pelo_simples?: Maybe<string>;
  data_exclusao_do_simples?: Maybe<string>;
  opcao_pelo_mei?: Maybe<boolean>;
  data_opcao_pelo_mei?: Maybe<string>;
  data_exclusao_do_mei?: Maybe<string>;
  razao_social?: Maybe<string>;
  codigo_natureza_juridica?: Maybe<number>;
  natureza_juridica?: Maybe<string>;
  qualificacao_do_responsavel?: Maybe<number>;
  capital_social?: Maybe<number>;
  codigo_porte?: Maybe<number>;
  porte?: Maybe<string>;
  ente_federativo_responsavel?: Maybe<string>;
  regime_tributario?: Maybe<unknown[]>;
  qsa?: Maybe<BrasilApiPartner[]>;
  /** `[{codigo: 0, descricao: ""}]` when there are none. */
  cnaes_secundarios?: Maybe<{ codigo?: Maybe<number>; descricao?: Maybe<string> }[]>;
}

/**
 * Text as prospecta keeps a provider's (clean-text.ts: no NUL, no lone surrogate, trimmed); empty
 * and non-text values are null. The CNPJ batch answers these records as they are, without the
 * enrichment cascade's cleaning, so the rule is applied here, where BrasilAPI's text is read.
 */
function text(value: unknown): string | null {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return null;
  return cleanText(value) || null;
}

/** A numeric code given as a number (leading zeros lost) or digits, padded back to its width. */
function code(value: unknown, width: number, { zeroIsValid = false } = {}): string | null {
  const digits = typeof value === 'number' ? String(value) : text(value);
  if (digits === null || !/^\d+$/.test(digits) || digits.length > width) return null;
  if (!zeroIsValid && Number(digits) === 0) return null;
  return digits.padStart(width, '0');
}

function codeAndDescription(codeValue: string | null, description: unknown): CodeAndDescription | null {
  return codeValue === null ? null : { code: codeValue, description: text(description) };
}

/** `YYYY-MM-DD`; Go's zero time (`0001-01-01`) from older minha-receita versions means "none". */
function date(value: unknown): string | null {
  const match = typeof value === 'string' ? /^(\d{4})-\d{2}-\d{2}/.exec(value) : null;
  return match && match[1] !== '0001' ? match[0] : null;
}

function digits(value: unknown): string | null {
  return text(value)?.replace(/\D/g, '') || null;
}

function list(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter((item) => typeof item === 'object' && item !== null) : [];
}

const STATUSES: readonly RegistrationStatus[] = REGISTRATION_STATUSES;
const STATUS_CODES: Record<number, RegistrationStatus> = {
  1: 'NULA',
  2: 'ATIVA',
  3: 'SUSPENSA',
  4: 'INAPTA',
  8: 'BAIXADA',
};

function registrationStatus(description: unknown, statusCode: unknown): RegistrationStatus | null {
  const label = text(description)?.toUpperCase();
  if (STATUSES.includes(label as RegistrationStatus)) return label as RegistrationStatus;
  return typeof statusCode === 'number' ? (STATUS_CODES[statusCode] ?? null) : null;
}

function establishment(id: unknown): CompanyRecord['establishment'] {
  const value = Number(id);
  return value === 1 ? 'MATRIZ' : value === 2 ? 'FILIAL' : null;
}

function capital(value: unknown): number | null {
  const amount = typeof value === 'string' ? Number(value) : value;
  return typeof amount === 'number' && Number.isFinite(amount) && amount >= 0 ? Math.round(amount * 100) / 100 : null;
}

/** A code of one of the layout's fixed lists, described from its table (shared/registry-codes.ts). */
function fixedCode(table: FixedCodeTable, value: unknown, width: number): CodeAndDescription | null {
  const padded = code(value, width, { zeroIsValid: true });
  return padded === null ? null : { code: padded, description: table[padded] ?? null };
}

/** `1133334444` (area code, then number) as minha-receita joins them. */
function phoneNumber(value: unknown): PhoneNumber | null {
  const all = digits(value);
  if (!all) return null;
  return all.length > 8 ? { areaCode: all.slice(0, 2), number: all.slice(2) } : { areaCode: null, number: all };
}

function taxOption(option: unknown, since: unknown, until: unknown): TaxOption | null {
  const flag = typeof option === 'boolean' ? option : null;
  const from = date(since);
  const to = date(until);
  return flag === null && from === null && to === null ? null : { option: flag, since: from, until: to };
}

/** minha-receita's JSON (BrasilAPI's body) as a company record; tolerant of any missing field. */
export function fromMinhaReceita(cnpj: string, body: Partial<BrasilApiCompany>): CompanyRecord {
  const b = body as Record<string, unknown>;
  const fiscalSize = code(b.codigo_porte, 2, { zeroIsValid: true });
  const street = [text(b.descricao_tipo_de_logradouro), text(b.logradouro)].filter(Boolean).join(' ');
  const zip = digits(b.cep);
  return {
    cnpj,
    root: cnpj.slice(0, 8),
    name: text(b.razao_social) ?? '',
    tradeName: text(b.nome_fantasia),
    establishment: establishment(b.identificador_matriz_filial),
    registrationStatus: registrationStatus(b.descricao_situacao_cadastral, b.situacao_cadastral),
    registrationStatusDate: date(b.data_situacao_cadastral),
    registrationStatusReason: codeAndDescription(
      code(b.motivo_situacao_cadastral, 2, { zeroIsValid: true }),
      b.descricao_motivo_situacao_cadastral,
    ),
    openingDate: date(b.data_inicio_atividade),
    mainActivity: codeAndDescription(code(b.cnae_fiscal, 7), b.cnae_fiscal_descricao),
    secondaryActivities: list(b.cnaes_secundarios).flatMap((a) => {
      const activity = codeAndDescription(code(a.codigo, 7), a.descricao);
      return activity ? [activity] : [];
    }),
    legalNature: codeAndDescription(code(b.codigo_natureza_juridica, 4), b.natureza_juridica),
    capital: capital(b.capital_social),
    fiscalSize: STORED_FISCAL_SIZES.find((size) => size === fiscalSize) ?? null,
    simplesOption: typeof b.opcao_pelo_simples === 'boolean' ? b.opcao_pelo_simples : null,
    meiOption: typeof b.opcao_pelo_mei === 'boolean' ? b.opcao_pelo_mei : null,
    address: {
      street: street || null,
      number: text(b.numero),
      complement: text(b.complemento),
      district: text(b.bairro),
      // About 0.1% of CEPs lost a leading zero upstream.
      zipCode: zip && zip.length <= 8 ? zip.padStart(8, '0') : null,
      city: text(b.municipio),
      cityCode: code(b.codigo_municipio, 4),
      state: text(b.uf)?.toUpperCase() ?? null,
      country: text(b.pais),
    },
    phones: [b.ddd_telefone_1, b.ddd_telefone_2].flatMap((phone) => digits(phone) ?? []),
    email: text(b.email),
    partners: list(b.qsa).flatMap((p) => {
      const name = text(p.nome_socio);
      if (!name) return [];
      const representative = text(p.cpf_representante_legal);
      const representativeName = text(p.nome_representante_legal);
      return [
        {
          name,
          document: text(p.cnpj_cpf_do_socio),
          qualification: text(p.qualificacao_socio),
          since: date(p.data_entrada_sociedade),
          type: fixedCode(PARTNER_TYPE_CODES, p.identificador_de_socio, 1),
          qualificationCode: code(p.codigo_qualificacao_socio, 2, { zeroIsValid: true }),
          country: codeAndDescription(code(p.codigo_pais, 3), p.pais),
          ageBand: fixedCode(AGE_BAND_CODES, p.codigo_faixa_etaria, 1),
          legalRepresentative:
            (representative && representative !== '***000000**') || representativeName
              ? {
                  document: representative,
                  name: representativeName,
                  qualification: codeAndDescription(
                    code(p.codigo_qualificacao_representante_legal, 2, { zeroIsValid: true }),
                    p.qualificacao_representante_legal,
                  ),
                }
              : null,
        },
      ];
    }),
    // Issue 22: the other fields minha-receita publishes.
    size: fixedCode(COMPANY_SIZE_CODES, b.codigo_porte, 2),
    responsibleQualification: codeAndDescription(
      code(b.qualificacao_do_responsavel, 2, { zeroIsValid: true }),
      null,
    ),
    federativeEntity: text(b.ente_federativo_responsavel),
    specialSituation: text(b.situacao_especial),
    specialSituationDate: date(b.data_situacao_especial),
    phone1: phoneNumber(b.ddd_telefone_1),
    phone2: phoneNumber(b.ddd_telefone_2),
    fax: phoneNumber(b.ddd_fax),
    foreignCity: text(b.nome_cidade_no_exterior),
    country: codeAndDescription(code(b.codigo_pais, 3), b.pais),
    simples: taxOption(b.opcao_pelo_simples, b.data_opcao_pelo_simples, b.data_exclusao_do_simples),
    mei: taxOption(b.opcao_pelo_mei, b.data_opcao_pelo_mei, b.data_exclusao_do_mei),
    taxRegimes: list(b.regime_tributario).flatMap((r) => {
      const year = Number(r.ano);
      const form = text(r.forma_de_tributacao);
      if (!Number.isInteger(year) || year < 1900 || year > 2100 || !form) return [];
      const scp = text(r.cnpj_da_scp);
      const entries = Number(r.quantidade_de_escrituracoes);
      return [{
        year,
        form,
        scpCnpj: scp && !/^0+$/.test(scp) ? scp : null,
        bookkeepingEntries: Number.isInteger(entries) && entries >= 0 ? entries : null,
      }];
    }).sort((a, b) => b.year - a.year),
    release: null,
  };
}

export interface BrasilApiOptions extends Omit<OutboundClientOptions, 'name' | 'breaker'> {
  /** Usually {@link BRASILAPI_URL}. */
  baseUrl: string;
  /** The provider's limiter, e.g. `createLimiter('brasilapi', throttleFor(BRASILAPI_LIMITS), redis)`. */
  limiter: Bottleneck;
  fetch?: typeof fetch;
  /** The first backoff when no `Retry-After` is given; doubles on each retry, with jitter. @default 500 */
  backoffMs?: number;
}

/** A lookup is tried again after a timeout or a network error; a body that is not JSON will not improve. */
function classify(err: unknown, timeout: AttemptFailure | undefined): AttemptFailure {
  if (timeout) return timeout;
  if (err instanceof SyntaxError) return { failure: 'unexpected response', kind: 'final' };
  return { failure: 'network error', kind: 'failed' };
}

export class BrasilApiSource {
  private readonly baseUrl: string;
  private readonly request: typeof fetch;
  private readonly outbound: OutboundClient;

  constructor({ baseUrl, fetch: request, backoffMs = 500, ...outbound }: BrasilApiOptions) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.request = request ?? fetch;
    this.outbound = new OutboundClient({ ...outbound, backoffMs, name: PROVIDER, service: 'brasilapi' });
  }

  /** Until when a 429's `Retry-After` holds every lookup; null when it does not. */
  pausedUntil(): Date | null {
    return this.outbound.pausedUntil();
  }

  /**
   * The company with this CNPJ (14 characters, normalized), or null when BrasilAPI does not know it.
   * Fails with a `provider_unavailable` ServiceError, or the reason of an abort.
   */
  async lookup(cnpj: string, signal?: AbortSignal, trace?: TraceContext): Promise<CompanyRecord | null> {
    return this.outbound.call((attemptSignal, traceparent) => this.attempt(cnpj, attemptSignal, traceparent), { signal, classify, trace });
  }

  private async attempt(cnpj: string, signal: AbortSignal, traceparent: string | undefined): Promise<Attempt<CompanyRecord | null>> {
    const res = await this.request(`${this.baseUrl}/api/cnpj/v1/${cnpj}`, {
      headers: { 'User-Agent': USER_AGENT, Accept: 'application/json', ...(traceparent ? { traceparent } : {}) },
      signal,
    });
    if (res.status === 200) {
      const bytes = await readCapped(res, MAX_BODY_BYTES);
      if (bytes === null) return { failure: 'answer too large', kind: 'final' };
      const body: unknown = JSON.parse(bytes.toString('utf8'));
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        return { failure: 'unexpected response', kind: 'final' };
      }
      return { value: fromMinhaReceita(cnpj, body) };
    }
    await res.body?.cancel();
    // 400 is BrasilAPI's "invalid CNPJ": for a CNPJ we validated, the same as unknown.
    if (res.status === 404 || res.status === 400) return { value: null };
    const failure = `HTTP ${res.status}`;
    if (res.status === 429) return { failure, kind: 'rate_limited', retryAfterMs: retryAfterMs(res.headers) };
    if (res.status >= 500) return { failure, kind: 'failed', retryAfterMs: retryAfterMs(res.headers) };
    return { failure, kind: 'final' };
  }
}
