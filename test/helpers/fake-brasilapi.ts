/**
 * A loopback stand-in for BrasilAPI's `GET /api/cnpj/v1/{cnpj}`, answering as the real one does:
 * minha-receita's JSON for known CNPJs, BrasilAPI's error bodies for unknown and malformed ones,
 * and its edge's refusals of bot-like User-Agents. Faults can be scripted for the next responses.
 * It records every request and the most requests it ever had in flight at once.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrasilApiCompany } from '../../server/providers/brasilapi-client.ts';

export type Fault =
  /** BrasilAPI's own rate limit (JSON, with `Retry-After`), or its edge's (plain text, without) when absent. */
  | { status: 429; retryAfter?: string }
  | { status: 500 | 502 | 503 }
  /** Answers normally, late. */
  | { delayMs: number }
  /** Answers normally once `until` settles: the test decides when, whatever the machine's speed. */
  | { until: Promise<unknown> }
  /** Accepts the request and never answers. */
  | { hang: true };

export interface RecordedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  at: number;
}

export interface FakeBrasilApi {
  url: string;
  /** Known companies, keyed by CNPJ. */
  companies: Map<string, Partial<BrasilApiCompany>>;
  add(company: Partial<BrasilApiCompany> & { cnpj: string }): void;
  /** The next `times` requests (default 1) get this fault; `Infinity` for every one after. */
  next(fault: Fault, times?: number): void;
  requests: RecordedRequest[];
  readonly inFlight: number;
  readonly maxInFlight: number;
  close(): Promise<void>;
}

/** A realistic body: a Ltda in São Paulo with a partner, a zero-led main CNAE and no secondary one. */
export function brasilApiCompany(overrides: Partial<BrasilApiCompany> & { cnpj: string }): BrasilApiCompany {
  return {
    identificador_matriz_filial: 1,
    descricao_identificador_matriz_filial: 'MATRIZ',
    nome_fantasia: 'ARROZ BOM',
    situacao_cadastral: 2,
    descricao_situacao_cadastral: 'ATIVA',
    data_situacao_cadastral: '2015-03-02',
    motivo_situacao_cadastral: 0,
    descricao_motivo_situacao_cadastral: 'SEM MOTIVO',
    nome_cidade_no_exterior: '',
    codigo_pais: null,
    pais: null,
    data_inicio_atividade: '2015-03-02',
    cnae_fiscal: 111301,
    cnae_fiscal_descricao: 'Cultivo de arroz',
    descricao_tipo_de_logradouro: 'RUA',
    logradouro: 'DAS FLORES',
    numero: '100',
    complemento: 'SALA 2',
    bairro: 'CENTRO',
    cep: '01001000',
    uf: 'SP',
    codigo_municipio: 7107,
    codigo_municipio_ibge: 3550308,
    municipio: 'SAO PAULO',
    ddd_telefone_1: '1133334444',
    ddd_telefone_2: '',
    ddd_fax: '',
    email: null,
    situacao_especial: '',
    data_situacao_especial: null,
    opcao_pelo_simples: true,
    data_opcao_pelo_simples: '2015-03-02',
    data_exclusao_do_simples: null,
    opcao_pelo_mei: false,
    data_opcao_pelo_mei: null,
    data_exclusao_do_mei: null,
    razao_social: 'ARROZ BOM COMERCIO DE CEREAIS LTDA',
    codigo_natureza_juridica: 2062,
    natureza_juridica: 'Sociedade Empresária Limitada',
    qualificacao_do_responsavel: 49,
    capital_social: 50000,
    codigo_porte: 1,
    porte: 'MICRO EMPRESA',
    ente_federativo_responsavel: null,
    regime_tributario: null,
    qsa: [
      {
        identificador_de_socio: 2,
        nome_socio: 'MARIA DA SILVA',
        cnpj_cpf_do_socio: '***220050**',
        codigo_qualificacao_socio: 49,
        qualificacao_socio: 'Sócio-Administrador',
        data_entrada_sociedade: '2015-03-02',
        codigo_pais: null,
        pais: null,
        cpf_representante_legal: '***000000**',
        nome_representante_legal: '',
        codigo_qualificacao_representante_legal: 0,
        qualificacao_representante_legal: null,
        codigo_faixa_etaria: 5,
        faixa_etaria: 'Entre 41 a 50 anos',
      },
    ],
    cnaes_secundarios: [{ codigo: 0, descricao: '' }],
    ...overrides,
  };
}

/** `11222333000181` → `11.222.333/0001-81`, as BrasilAPI's messages write it. */
const masked = (cnpj: string) => cnpj.replace(/^(.{2})(.{3})(.{3})(.{4})(.{2})$/, '$1.$2.$3/$4-$5');

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

/** Vercel's bot mitigation in front of BrasilAPI answers in plain text with these headers. */
function edge(res: ServerResponse, status: number) {
  const id = `gru1::fake-${Date.now()}`;
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'x-vercel-mitigated': 'deny',
    'x-vercel-id': id,
  });
  res.end(`${status === 403 ? 'Forbidden' : 'Too Many Requests'}\n\n${id}\n`);
}

export async function startFakeBrasilApi(): Promise<FakeBrasilApi> {
  const companies = new Map<string, Partial<BrasilApiCompany>>();
  const faults: { fault: Fault; remaining: number }[] = [];
  const requests: RecordedRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;

  function takeFault(): Fault | undefined {
    const first = faults[0];
    if (first && --first.remaining <= 0) faults.shift();
    return first?.fault;
  }

  function answer(res: ServerResponse, path: string) {
    const match = /^\/api\/cnpj\/v1\/([^/?]+)$/.exec(path);
    if (!match) {
      return json(res, 404, { message: 'Rota não encontrada', type: 'not_found', name: 'NotFoundError' });
    }
    const cnpj = decodeURIComponent(match[1]!).replace(/[./-]/g, '');
    if (!/^\d{14}$/.test(cnpj)) {
      return json(res, 400, { message: `CNPJ ${match[1]} inválido.`, type: 'bad_request', name: 'BadRequestError' });
    }
    const company = companies.get(cnpj);
    if (!company) {
      const message = `CNPJ ${masked(cnpj)} não encontrado.`;
      return json(res, 404, { message, type: 'not_found', name: 'NotFoundError' });
    }
    json(res, 200, company);
  }

  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    requests.push({ path, headers: req.headers, at: Date.now() });
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('close', () => inFlight--);

    // The edge judges the User-Agent before anything reaches the application (BrasilAPI #826, #835).
    // #826 saw `undici` pass; it is refused here too, as older Nodes send it by default.
    const agent = req.headers['user-agent'];
    if (!agent) return edge(res, 429);
    if (agent === 'node' || agent === 'undici') return edge(res, 403);

    const fault = takeFault();
    if (!fault) return answer(res, path);
    if ('hang' in fault) return;
    if ('delayMs' in fault) {
      const timer = setTimeout(() => answer(res, path), fault.delayMs);
      res.on('close', () => clearTimeout(timer));
      return;
    }
    if ('until' in fault) {
      const go = () => void (res.writableEnded || res.destroyed || answer(res, path));
      void fault.until.then(go, go);
      return;
    }
    if (fault.status === 429 && fault.retryAfter !== undefined) {
      const message = 'Muitas requisições deste IP. Por favor, tente novamente em alguns instantes.';
      const body = { message, type: 'rate_limit_exceeded', name: 'RateLimitError' };
      return json(res, 429, body, { 'Retry-After': fault.retryAfter });
    }
    if (fault.status === 429) return edge(res, 429);
    if (fault.status === 500) {
      return json(res, 500, { message: 'Erro interno', type: 'internal_error', name: 'InternalError' });
    }
    res.writeHead(fault.status, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(fault.status === 502 ? 'Bad Gateway' : 'Service Unavailable');
  });

  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    companies,
    add: (company) => void companies.set(company.cnpj, company),
    next: (fault, times = 1) => void faults.push({ fault, remaining: times }),
    requests,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
