import type Bottleneck from 'bottleneck';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../../server/lib/errors.ts';
import { closeLimiter, createLimiter } from '../../../server/outbound/limiter.ts';
import { BrasilApiSource, fromMinhaReceita, type BrasilApiOptions } from '../../../server/providers/brasilapi-client.ts';
import { makeCnpj } from '../../helpers/companies.ts';
import { eventually } from '../../helpers/eventually.ts';
import { latch } from '../../helpers/latch.ts';
import { virtualClock } from '../../helpers/virtual-clock.ts';
import { brasilApiCompany, startFakeBrasilApi, type FakeBrasilApi } from '../../helpers/fake-brasilapi.ts';

const known = makeCnpj('11222333');
const unknown = makeCnpj('44555666');

let fake: FakeBrasilApi;
let limiter: Bottleneck;

beforeEach(async () => {
  fake = await startFakeBrasilApi();
  fake.add(brasilApiCompany({ cnpj: known }));
  limiter = createLimiter('brasilapi', { maxConcurrent: 1, minTime: 2 });
});
afterEach(async () => {
  await closeLimiter(limiter);
  await fake.close();
});

const source = (options: Partial<BrasilApiOptions> = {}) =>
  new BrasilApiSource({ baseUrl: fake.url, limiter, backoffMs: 2, ...options });

/** The rejection of `promise`, which must reject. */
async function rejection(promise: Promise<unknown>): Promise<any> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (err: unknown) => err,
  );
}

describe('mapping minha-receita JSON', () => {
  it('maps a full body: leading zeros restored, placeholder activity dropped, phones as digits', async () => {
    fake.add(
      brasilApiCompany({
        cnpj: known,
        nome_fantasia: '',
        cep: '1001000',
        codigo_municipio: 139,
        ddd_telefone_2: '(11) 3333-5555',
        data_situacao_cadastral: null,
        email: 'Contato@ArrozBom.com.br',
      }),
    );
    expect(await source().lookup(known)).toEqual({
      cnpj: known,
      root: known.slice(0, 8),
      name: 'ARROZ BOM COMERCIO DE CEREAIS LTDA',
      tradeName: null,
      establishment: 'MATRIZ',
      registrationStatus: 'ATIVA',
      registrationStatusDate: null,
      registrationStatusReason: { code: '00', description: 'SEM MOTIVO' },
      openingDate: '2015-03-02',
      mainActivity: { code: '0111301', description: 'Cultivo de arroz' },
      secondaryActivities: [],
      legalNature: { code: '2062', description: 'Sociedade Empresária Limitada' },
      capital: 50000,
      fiscalSize: '01',
      simplesOption: true,
      meiOption: false,
      address: {
        street: 'RUA DAS FLORES',
        number: '100',
        complement: 'SALA 2',
        district: 'CENTRO',
        zipCode: '01001000',
        city: 'SAO PAULO',
        cityCode: '0139',
        state: 'SP',
        country: null,
      },
      phones: ['1133334444', '1133335555'],
      email: 'Contato@ArrozBom.com.br',
      partners: [
        {
          name: 'MARIA DA SILVA',
          document: '***220050**',
          qualification: 'Sócio-Administrador',
          since: '2015-03-02',
          type: { code: '2', description: 'PESSOA FÍSICA' },
          qualificationCode: '49',
          country: null,
          ageBand: { code: '5', description: '41 A 50 ANOS' },
          legalRepresentative: null,
        },
      ],
      size: { code: '01', description: 'MICRO EMPRESA' },
      responsibleQualification: { code: '49', description: null },
      federativeEntity: null,
      specialSituation: null,
      specialSituationDate: null,
      phone1: { areaCode: '11', number: '33334444' },
      phone2: { areaCode: '11', number: '33335555' },
      fax: null,
      foreignCity: null,
      country: null,
      simples: { option: true, since: '2015-03-02', until: null },
      mei: { option: false, since: null, until: null },
      taxRegimes: [],
      release: null,
    });
  });

  it('keeps real secondary activities, a branch, a status from its code and porte 05', () => {
    const record = fromMinhaReceita(
      known,
      brasilApiCompany({
        cnpj: known,
        identificador_matriz_filial: 2,
        descricao_situacao_cadastral: null,
        situacao_cadastral: 8,
        motivo_situacao_cadastral: 1,
        descricao_motivo_situacao_cadastral: 'EXTINCAO POR ENCERRAMENTO LIQUIDACAO VOLUNTARIA',
        codigo_porte: 5,
        cnaes_secundarios: [
          { codigo: 4623199, descricao: 'Comércio atacadista de matérias-primas agrícolas' },
          { codigo: 161003, descricao: 'Serviço de preparação de terreno' },
        ],
        qsa: [{ nome_socio: 'ARROZ HOLDING SA', cnpj_cpf_do_socio: '44555666000170', data_entrada_sociedade: null }],
        regime_tributario: [
          { ano: 2022, cnpj_da_scp: null, forma_de_tributacao: 'LUCRO PRESUMIDO', quantidade_de_escrituracoes: 1 },
          { ano: 2023, cnpj_da_scp: null, forma_de_tributacao: 'LUCRO REAL', quantidade_de_escrituracoes: 2 },
        ],
      }),
    );
    expect(record).toMatchObject({
      establishment: 'FILIAL',
      registrationStatus: 'BAIXADA',
      registrationStatusReason: { code: '01', description: 'EXTINCAO POR ENCERRAMENTO LIQUIDACAO VOLUNTARIA' },
      fiscalSize: '05',
      secondaryActivities: [
        { code: '4623199', description: 'Comércio atacadista de matérias-primas agrícolas' },
        { code: '0161003', description: 'Serviço de preparação de terreno' },
      ],
      partners: [{ name: 'ARROZ HOLDING SA', document: '44555666000170', qualification: null, since: null, legalRepresentative: null }],
      size: { code: '05', description: 'DEMAIS' },
      taxRegimes: [
        { year: 2023, form: 'LUCRO REAL', scpCnpj: null, bookkeepingEntries: 2 },
        { year: 2022, form: 'LUCRO PRESUMIDO', scpCnpj: null, bookkeepingEntries: 1 },
      ],
    });
  });

  it('never throws on missing, null or oddly typed fields', () => {
    const empty = {
      cnpj: known,
      root: known.slice(0, 8),
      name: '',
      tradeName: null,
      establishment: null,
      registrationStatus: null,
      registrationStatusDate: null,
      registrationStatusReason: null,
      openingDate: null,
      mainActivity: null,
      secondaryActivities: [],
      legalNature: null,
      capital: null,
      fiscalSize: null,
      simplesOption: null,
      meiOption: null,
      address: {
        street: null,
        number: null,
        complement: null,
        district: null,
        zipCode: null,
        city: null,
        cityCode: null,
        state: null,
        country: null,
      },
      phones: [],
      email: null,
      partners: [],
      size: null,
      responsibleQualification: null,
      federativeEntity: null,
      specialSituation: null,
      specialSituationDate: null,
      phone1: null,
      phone2: null,
      fax: null,
      foreignCity: null,
      country: null,
      simples: null,
      mei: null,
      taxRegimes: [],
      release: null,
    };
    expect(fromMinhaReceita(known, {})).toEqual(empty);
    const odd = {
      qsa: 'none',
      cnaes_secundarios: [null, 7],
      data_inicio_atividade: '0001-01-01T00:00:00Z',
      capital_social: 'lots',
    };
    expect(fromMinhaReceita(known, odd as never)).toEqual(empty);
  });
});

describe('BrasilApiSource.lookup', () => {
  it('sends a real User-Agent and asks for JSON: the edge refuses Node’s default one', async () => {
    await source().lookup(known);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.path).toBe(`/api/cnpj/v1/${known}`);
    const userAgent = /^prospecta\/\d+\.\d+\.\d+ \(\+https:\/\/github\.com\/prospecta\)$/;
    expect(fake.requests[0]!.headers['user-agent']).toMatch(userAgent);
    expect(fake.requests[0]!.headers.accept).toBe('application/json');

    const bare = await fetch(`${fake.url}/api/cnpj/v1/${known}`);
    expect(bare.status).toBe(403);
  });

  it('answers null for an unknown CNPJ (404) and for one BrasilAPI calls invalid (400)', async () => {
    expect(await source().lookup(unknown)).toBeNull();
    expect(await source().lookup('12ABC34501DE35')).toBeNull();
    expect(fake.requests).toHaveLength(2);
  });

  it('waits as long as Retry-After says (seconds), then succeeds', async () => {
    fake.next({ status: 429, retryAfter: '1' });
    const clock = virtualClock();
    expect(await source({ clock }).lookup(known)).toMatchObject({ cnpj: known });
    expect(fake.requests).toHaveLength(2);
    // Exactly the wait asked for: the 429's pause, already waited out, costs the retry nothing more.
    expect(clock.waits).toEqual([1000]);
  });

  it('gives up with 503 provider_unavailable after maxRetries + 1 calls when 429 persists', async () => {
    fake.next({ status: 429 }, Infinity);
    const err = await rejection(source({ maxRetries: 3 }).lookup(known));
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({ code: 'provider_unavailable' });
    expect(err.message).toBe('BrasilAPI is unavailable (HTTP 429); try again later');
    expect(fake.requests).toHaveLength(4);
  });

  it('fails at once on a Retry-After beyond maxRetryAfterMs, in seconds or as a date, and passes it on', async () => {
    fake.next({ status: 429, retryAfter: '120' });
    expect(await rejection(source().lookup(known))).toMatchObject({
      code: 'provider_unavailable',
      details: { retryAfterSeconds: 120 },
    });
    fake.next({ status: 429, retryAfter: new Date(Date.now() + 120_000).toUTCString() });
    const err = await rejection(source().lookup(known));
    expect(err.details.retryAfterSeconds).toBeGreaterThan(100);
    expect(fake.requests).toHaveLength(2);
  });

  it('refuses an answer past 1 MiB without retrying it: no company is that large (issue 39)', async () => {
    fake.add(brasilApiCompany({ cnpj: known, razao_social: 'X'.repeat(2 * 1024 * 1024) }));
    const err = await rejection(source({ maxRetries: 3 }).lookup(known));
    expect(err).toMatchObject({ code: 'provider_unavailable' });
    expect(fake.requests).toHaveLength(1);
  });

  it('retries 5xx answers', async () => {
    fake.next({ status: 500 });
    fake.next({ status: 502 });
    expect(await source().lookup(known)).toMatchObject({ cnpj: known });
    expect(fake.requests).toHaveLength(3);

    fake.next({ status: 503 }, 3);
    const err = await rejection(source().lookup(known));
    expect(err.message).toBe('BrasilAPI is unavailable (HTTP 503); try again later');
  });

  it('does not retry a refusal (403)', async () => {
    const asNode: typeof fetch = (url, init) => fetch(url, { ...init, headers: { 'User-Agent': 'node' } });
    const err = await rejection(source({ fetch: asNode }).lookup(known));
    expect(err).toMatchObject({ code: 'provider_unavailable' });
    expect(err.message).toBe('BrasilAPI is unavailable (HTTP 403); try again later');
    expect(fake.requests).toHaveLength(1);
  });

  it('times out a hung request and retries it', async () => {
    fake.next({ hang: true });
    // The retry must be answered within this timeout too: 1 s, however busy the machine.
    expect(await source({ timeoutMs: 1000 }).lookup(known)).toMatchObject({ cnpj: known });
    expect(fake.requests).toHaveLength(2);

    fake.next({ hang: true }, 2);
    const err = await rejection(source({ timeoutMs: 100, maxRetries: 1 }).lookup(known));
    expect(err.message).toBe('BrasilAPI is unavailable (no answer within 100 ms); try again later');
  });

  it('retries a network error', async () => {
    let calls = 0;
    const flaky: typeof fetch = (url, init) =>
      ++calls === 1 ? Promise.reject(new TypeError('fetch failed')) : fetch(url, init);
    expect(await source({ fetch: flaky }).lookup(known)).toMatchObject({ cnpj: known });
    expect(calls).toBe(2);
  });

  it('drops a queued lookup whose signal aborts: BrasilAPI is never called for it', async () => {
    const brasilApi = source();
    const answerFirst = latch();
    fake.next({ until: answerFirst.promise });
    const first = brasilApi.lookup(known);
    const controller = new AbortController();
    const queued = brasilApi.lookup(unknown, controller.signal);
    await eventually(() => expect(fake.requests).toHaveLength(1), { message: 'the first call to BrasilAPI' });
    const reason = new Error('client went away');
    controller.abort(reason);

    expect(await rejection(queued)).toBe(reason);
    answerFirst.open();
    expect(await first).toMatchObject({ cnpj: known });
    expect(await brasilApi.lookup(known)).toMatchObject({ cnpj: known });
    expect(fake.requests.map((r) => r.path)).toEqual([`/api/cnpj/v1/${known}`, `/api/cnpj/v1/${known}`]);
  });

  it('abandons a lookup in flight on abort and makes no further call', async () => {
    fake.next({ hang: true }, Infinity);
    const controller = new AbortController();
    const lookup = source().lookup(known, controller.signal);
    await eventually(() => expect(fake.requests).toHaveLength(1), { message: 'the first call to BrasilAPI' });
    const reason = new Error('stop');
    controller.abort(reason);

    expect(await rejection(lookup)).toBe(reason);
    // The hang-up reaching BrasilAPI is the last thing the abandoned lookup causes (its retry loop
    // ended with the rejection); counted after it, a retry would show as a second request.
    await eventually(() => expect(fake.inFlight).toBe(0), { message: 'BrasilAPI to see the call hung up' });
    expect(fake.requests).toHaveLength(1);
  });

  it('stops waiting to retry on abort', async () => {
    fake.next({ status: 429 });
    const controller = new AbortController();
    const lookup = source({ backoffMs: 5_000 }).lookup(known, controller.signal);
    await eventually(() => expect(fake.requests).toHaveLength(1), { message: 'the first call to BrasilAPI' });
    const reason = new Error('stop');
    controller.abort(reason);
    expect(await rejection(lookup)).toBe(reason);
    expect(fake.requests).toHaveLength(1);
  });

  it('keeps to the limiter’s maxConcurrent', async () => {
    await closeLimiter(limiter);
    limiter = createLimiter('brasilapi', { maxConcurrent: 2 });
    // BrasilAPI answers once two are in flight: the limiter is seen to allow two, not assumed to
    // have overlapped them within a delay.
    const answer = latch();
    fake.next({ until: answer.promise }, Infinity);
    const lookups = Array.from({ length: 8 }, () => source().lookup(known));
    await eventually(() => expect(fake.inFlight).toBe(2), { message: 'two lookups at BrasilAPI at once' });
    answer.open();
    const results = await Promise.all(lookups);
    expect(results.every((r) => r?.cnpj === known)).toBe(true);
    expect(fake.requests).toHaveLength(8);
    expect(fake.maxInFlight).toBe(2);
  });

  it('fails with 503 when no turn comes within maxQueueWaitMs', async () => {
    // The first holds the only turn until the test lets BrasilAPI answer, and waits as long as it
    // needs for that turn: only the second's 50 ms is under test.
    const answerFirst = latch();
    fake.next({ until: answerFirst.promise });
    const first = source().lookup(known);
    await eventually(() => expect(fake.requests).toHaveLength(1), { message: 'the first call to BrasilAPI' });
    const err = await rejection(source({ maxQueueWaitMs: 50 }).lookup(known));
    expect(err).toMatchObject({ code: 'provider_unavailable' });
    expect(err.message).toBe('BrasilAPI is busy (no turn within 50 ms); try again later');
    answerFirst.open();
    await first;
    expect(fake.requests).toHaveLength(1);
  });
});
