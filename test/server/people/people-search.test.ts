/**
 * People search and its stream through the real server: a workspace's imported list, the
 * registry's partners, the demo set and a loopback Apollo, merged, filtered, charged per row.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCommand } from '../../../server/cli/control.ts';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { MAX_ROW_CHARS } from '../../../server/receita/import/csv-splitter.ts';
import { DEMO_PEOPLE, seedDemoPeople } from '../../../server/seed/demo-people.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { companyDoc, makeCnpj, partner } from '../../helpers/companies.ts';
import { eventually } from '../../helpers/eventually.ts';
import { startFakeApollo, testWorld, type FakeProvider } from '../../helpers/fake-providers.ts';
import { latch } from '../../helpers/latch.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

let app: TestApp;
let apollo: FakeProvider;
let dir: string;
let workspace: { workspaceId: string; apiKey: string };

const LIST = [
  'Nome completo;Cargo;E-mail;Status do email;Empresa;Site;Funcionários;Cidade;Tecnologias;LinkedIn;Observação',
  'Ana Souza;Head of Sales;ana.souza@acme.com.br;verified;Acme Software;https://www.acme.com.br;120;São Paulo;HubSpot, AWS;https://www.linkedin.com/in/ana-souza;cliente',
  'Marcos Prado;"Diretor',
  'Comercial";marcos@padaria.example;;Padaria Pão Quente;padaria.example;35;Curitiba;;;',
  ';Analista;sem.nome@acme.com.br;;Acme Software;acme.com.br;120;;;;',
  'Paula Reis;CFO;paula.reis@;;Globex;globex.com;2400;Curitiba;;;',
  'Rita Moraes;CTO;;;Globex;globex.com;2400;Curitiba;Kubernetes;;',
].join('\n');

beforeAll(async () => {
  apollo = await startFakeApollo(testWorld());
  // No pacing of Apollo calls (5 a second by default): a test's call is not held back by the
  // previous test's, however quickly that one ran. Pacing is tested in throttle.test.ts.
  app = await startTestApp(
    {
      APOLLO_API_KEY: apollo.key,
      APOLLO_URL: apollo.url,
      APOLLO_RATE_PER_SECOND: '1000',
      APOLLO_RATE_PER_MINUTE: '100000',
    },
    // A stream whose client left waits this long for a reconnection before its calls are cancelled.
    { streams: { graceMs: 200 } },
  );
  dir = await tempDir('people');
  workspace = await app.workspace();
  await app.services.store.collection<CompanyDoc>('companies').bulkWrite(
    [
      companyDoc(makeCnpj('11222333'), {
        name: 'ACME SOFTWARE HOUSE LTDA',
        tradeName: 'ACME',
        partners: [
          partner({ name: 'MARIA DE SOUZA', document: '***123456**', qualification: 'Sócio-Administrador', since: '2012-05-01' }),
          partner({ name: 'ACME HOLDING S.A.', document: makeCnpj('99888777'), qualification: 'Sócio', since: null }),
          partner({ name: 'PEDRO ALVES', document: '***654321**', qualification: 'Diretor', since: null }),
        ],
      }),
      // A branch lists the same partners: one row per person and company, not per establishment.
      companyDoc(makeCnpj('11222333', '0002'), {
        name: 'ACME SOFTWARE HOUSE LTDA',
        partners: [partner({ name: 'MARIA DE SOUZA', document: '***123456**', qualification: 'Sócio-Administrador', since: '2012-05-01' })],
      }),
      companyDoc(makeCnpj('44555666'), {
        name: 'PADARIA SAO JOAO LTDA',
        address: { street: null, number: null, complement: null, district: null, zipCode: null, city: 'CURITIBA', cityCode: '7535', state: 'PR', country: null },
        partners: [partner({ name: 'JOAO DA SILVA', document: '***987654**', qualification: 'Titular Pessoa Física Residente ou Domiciliado no Brasil', since: null })],
      }),
    ].map((document) => ({ insertOne: { document } })),
  );
  await seedDemoPeople(app.services.people);
});

afterAll(async () => {
  await app.close();
  await apollo.close();
});

beforeEach(() => apollo.reset());

const search = (body: unknown, key = workspace.apiKey) => app.request('POST', '/v1/api/sourcing/people', { key, body });
const names = (res: { body: { results: Array<{ name: string }> } }) => res.body.results.map((p) => p.name);
const balance = async (key = workspace.apiKey) => (await app.request('GET', '/v1/api/credits', { key })).body.balance as number;

describe('import people', () => {
  it('maps Portuguese headers, reports unusable rows by line, and updates on a re-import', async () => {
    const file = path.join(dir, 'clientes.csv');
    await writeFile(file, '\uFEFF' + LIST);
    const problems: unknown[] = [];
    const first = await runCommand(app.services, { command: 'import people', args: { workspace: workspace.workspaceId, file } }, (e) =>
      'problem' in e ? problems.push(e.problem) : undefined,
    );
    expect(first).toMatchObject({ ok: true, result: { list: 'clientes', rows: 5, inserted: 3, updated: 0, problems: 3 } });
    expect((first as { result: { columns: Record<string, string> } }).result.columns).toMatchObject({
      'Nome completo': 'name',
      Cargo: 'title',
      'E-mail': 'email',
      Funcionários: 'companySize',
      Site: 'domain',
    });
    expect(problems).toEqual([
      { file, line: 1, message: 'column "Observação" is not recognised; ignored' },
      { file, line: 5, message: 'no name; row skipped' },
      { file, line: 6, message: '"paula.reis@" is not an email address; row skipped' },
    ]);
    const again = await runCommand(app.services, { command: 'import people', args: { workspace: workspace.workspaceId, file } });
    expect(again).toMatchObject({ ok: true, result: { inserted: 0, updated: 3 } });
  });

  it('joins a first-name column and a surname into the full name, in English, Portuguese and Spanish', async () => {
    const files: Array<[string, string]> = [
      ['pt.csv', 'Nome;Sobrenome;Cargo\nAna;Souza Lima;CEO\n'],
      ['en.csv', 'First name,Last name,Title\nAna,Souza Lima,CEO\n'],
      ['es.csv', 'Nombre,Apellido,Cargo\nAna,Souza Lima,CEO\n'],
      // A full name beside a redundant surname column stays as it is.
      ['full.csv', 'Nome,Sobrenome\nAna Souza Lima,Souza Lima\n'],
    ];
    for (const [name, text] of files) {
      const { workspaceId } = await app.workspace();
      const file = path.join(dir, name);
      await writeFile(file, text);
      const imported = await runCommand(app.services, { command: "import people", args: { workspace: workspaceId, file } });
      expect(imported, JSON.stringify(imported)).toMatchObject({ ok: true, result: { inserted: 1 } });
      const [person] = await app.services.people.collection.find({ workspaceId }).toArray();
      expect(person, name).toMatchObject({ name: 'Ana Souza Lima', firstName: 'Ana', lastName: 'Souza Lima' });
    }
  });

  it('reports a row with an unbalanced quote by its line and imports nothing of it', async () => {
    const { workspaceId } = await app.workspace();
    const file = path.join(dir, 'quotes.csv');
    await writeFile(file, 'Name,Title\nAna Souza,CEO\n"Bruno Lima,CTO\nCarla Dias,CFO\n');
    const problems: unknown[] = [];
    const result = await runCommand(app.services, { command: 'import people', args: { workspace: workspaceId, file } }, (e) =>
      'problem' in e ? problems.push(e.problem) : undefined,
    );
    expect(result).toMatchObject({ ok: true, result: { inserted: 1, problems: 1 } });
    expect(problems).toEqual([{ file, line: 3, message: expect.stringMatching(/^a quoted field is not closed \(an unbalanced quote\).*; row skipped$/) }]);
    const names = (await app.services.people.collection.find({ workspaceId }).toArray()).map((p) => p.name);
    expect(names).toEqual(['Ana Souza']);
  });

  it('caps a cell at 2,000 characters and a row at the splitter limit, reporting each by line; a 16 MiB breakless cell is never a name (issue 39)', async () => {
    const { workspaceId, apiKey } = await app.workspace();
    await app.services.credits.credit(workspaceId, 100, 'grant', 'tests');
    const file = path.join(dir, 'hostile.csv');
    const lines = [
      'Name;Title',
      'Ana Souza;CEO',
      `Bruno ${'x'.repeat(2_001)};CTO`,
      // A line past the row limit, then more rows after it: they are read again once it ends.
      `Carla ${'y'.repeat(2 * MAX_ROW_CHARS)};CFO`,
      'Davi Lima;COO',
      // The last: a 16 MiB cell without a single line break to its end.
      `Elisa Dias;${'z'.repeat(16 * 1024 * 1024)}`,
    ];
    await writeFile(file, lines.join('\n'));
    const problems: Array<{ line: number; message: string }> = [];
    const result = await runCommand(app.services, { command: 'import people', args: { workspace: workspaceId, file } }, (e) =>
      'problem' in e ? problems.push(e.problem as { line: number; message: string }) : undefined,
    );
    expect(result).toMatchObject({ ok: true, result: { inserted: 2, problems: 3 } });
    expect(problems.map(({ line, message }) => ({ line, message }))).toEqual([
      { line: 3, message: 'column "Name" holds 2,007 characters, more than 2,000; row skipped' },
      { line: 4, message: expect.stringMatching(/^the row is longer than 1,048,576 characters .*; row skipped$/) },
      { line: 6, message: expect.stringMatching(/^the row is longer than 1,048,576 characters .*; row skipped$/) },
    ]);
    const names = (await app.services.people.collection.find({ workspaceId }).toArray()).map((p) => p.name).sort();
    expect(names).toEqual(['Ana Souza', 'Davi Lima']);
    const res = await search({ sourceOrder: ['lists'], limit: 25 }, apiKey);
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body).length).toBeLessThan(10_000);
  });

  it('gives C-level and founder titles a seniority, unless the file says one', async () => {
    const { workspaceId } = await app.workspace();
    const file = path.join(dir, 'titles.csv');
    const titles = ['CEO', 'CTO', 'CFO', 'COO', 'Founder & CEO', 'Sócio-Administrador', 'Diretor-Presidente', 'Diretora Comercial', 'Gerente de Vendas', 'VP Sales', 'Analista'];
    const names = ['Ana', 'Bruno', 'Carla', 'Davi', 'Elisa', 'Fabio', 'Gabriela', 'Hugo', 'Iara', 'Joao', 'Kelly'];
    await writeFile(file, ['Name,Title,Seniority', ...titles.map((t, i) => `${names[i]} Souza,"${t}",`), 'Xavier Souza,CEO,manager'].join('\n'));
    await runCommand(app.services, { command: 'import people', args: { workspace: workspaceId, file } });
    // By name, so Xavier's stated CEO comes after Ana's whatever order the store returns them in.
    const people = await app.services.people.collection.find({ workspaceId }, { sort: { name: 1 } }).toArray();
    const seniority = Object.fromEntries(people.map((p) => [p.title, p.name === 'Xavier Souza' ? 'stated' : p.seniority]));
    expect(seniority).toEqual({
      CEO: 'stated',
      CTO: 'c_suite',
      CFO: 'c_suite',
      COO: 'c_suite',
      'Founder & CEO': 'founder',
      'Sócio-Administrador': 'owner',
      'Diretor-Presidente': 'c_suite',
      'Diretora Comercial': 'director',
      'Gerente de Vendas': 'manager',
      'VP Sales': 'vp',
      Analista: 'entry',
    });
    expect(people.find((p) => p.name === 'Xavier Souza')!.seniority).toBe('manager');
    expect(people.find((p) => p.name === 'Ana Souza')!.seniority).toBe('c_suite');
  });

  it('refuses a file without a name column, and an unknown workspace', async () => {
    const file = path.join(dir, 'no-names.csv');
    await writeFile(file, 'email,company\nx@y.com,Acme\n');
    expect(await runCommand(app.services, { command: 'import people', args: { workspace: workspace.workspaceId, file } })).toMatchObject({
      ok: false,
      usage: true,
      message: expect.stringMatching(/no name column/),
    });
    expect(await runCommand(app.services, { command: 'import people', args: { workspace: 'nope', file } })).toMatchObject({ ok: false });
  });
});

describe('POST /api/sourcing/people', () => {
  it("searches the workspace's lists with every filter, charging 1 credit per row", async () => {
    const before = await balance();
    const res = await search({ sourceOrder: ['lists'], jobTitle: 'diretor comercial' });
    expect(res.status).toBe(200);
    expect(names(res)).toEqual(['Marcos Prado']);
    expect(res.body.results[0]).toMatchObject({ source: 'lists', list: 'clientes', emailStatus: 'unverified', domain: 'padaria.example', companySize: 35 });
    expect(before - (await balance())).toBe(1);

    expect(names(await search({ sourceOrder: ['lists'], emailStatuses: ['verified'] }))).toEqual(['Ana Souza']);
    expect(names(await search({ sourceOrder: ['lists'], emailStatuses: ['unavailable'] }))).toEqual(['Rita Moraes']);
    expect(names(await search({ sourceOrder: ['lists'], companySizes: ['1001-5000'] }))).toEqual(['Rita Moraes']);
    expect(names(await search({ sourceOrder: ['lists'], technologies: ['kubernetes', 'salesforce'] }))).toEqual(['Rita Moraes']);
    expect(names(await search({ sourceOrder: ['lists'], domain: 'https://acme.com.br/' }))).toEqual(['Ana Souza']);
    expect(names(await search({ sourceOrder: ['lists'], location: 'sao paulo' }))).toEqual(['Ana Souza']);
    expect(names(await search({ sourceOrder: ['lists'], company: 'globex', jobTitle: 'cfo' }))).toEqual([]);
  });

  it("never shows one workspace's lists to another", async () => {
    const other = await app.workspace();
    const res = await search({ sourceOrder: ['lists'] }, other.apiKey);
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([]);
    expect(await balance(other.apiKey)).toBe(500);
  });

  it("finds registry partners who are people, once per company, with their qualification as title", async () => {
    const res = await search({ sourceOrder: ['receita_federal'], limit: 25 });
    expect(names(res)).toEqual(['MARIA DE SOUZA', 'PEDRO ALVES', 'JOAO DA SILVA']);
    expect(res.body.results[0]).toMatchObject({
      title: 'Sócio-Administrador',
      seniority: 'owner',
      company: 'ACME',
      cnpj: makeCnpj('11222333'),
      emailStatus: 'unavailable',
      source: 'receita_federal',
    });
    expect(names(await search({ sourceOrder: ['receita_federal'], jobTitle: 'director' }))).toEqual(['PEDRO ALVES']);
    expect(names(await search({ sourceOrder: ['receita_federal'], seniorities: ['owner'], location: 'Curitiba, PR' }))).toEqual(['JOAO DA SILVA']);
    expect(names(await search({ sourceOrder: ['receita_federal'], emailStatuses: ['verified'] }))).toEqual([]);
  });

  it('a source that cannot apply a filter answers nothing and names the filter', async () => {
    const res = await search({ sourceOrder: ['receita_federal', 'lists'], technologies: ['Kubernetes'] });
    expect(res.status).toBe(200);
    expect(names(res)).toEqual(['Rita Moraes']);
    expect(res.body.sources).toEqual([
      { source: 'receita_federal', count: 0, error: 'the registry cannot filter people by technologies' },
      { source: 'lists', count: 1 },
    ]);
  });

  it('searches the demo set', async () => {
    const res = await search({ sourceOrder: ['demo'], seniorities: ['c_suite'], roles: ['engineering'], limit: 25 });
    expect(res.body.results.length).toBeGreaterThan(0);
    for (const person of res.body.results) expect(person).toMatchObject({ title: 'CTO', source: 'demo' });
    expect(await app.services.people.count({ workspaceId: null })).toBe(DEMO_PEOPLE);
  });

  it("maps filters onto Apollo's people search and merges a person found twice", async () => {
    const res = await search({ sourceOrder: ['lists', 'apollo'], jobTitle: 'Head of Sales', companySizes: ['51-200'], limit: 5 });
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([
      expect.objectContaining({ name: 'Ana Souza', source: 'lists', sources: ['lists', 'apollo'], seniority: 'head', email: 'ana.souza@acme.com.br' }),
    ]);
    expect(res.body.sources).toEqual([
      { source: 'lists', count: 1 },
      { source: 'apollo', count: 0 },
    ]);
    expect(apollo.requests[0]!.body).toMatchObject({ person_titles: ['Head of Sales'], organization_num_employees_ranges: ['51,200'], per_page: 5 });
    expect(apollo.requests[0]!.headers['x-api-key']).toBe(apollo.key);
  });

  it('reports an Apollo failure as that source’s error while the others answer', async () => {
    apollo.next({ status: 401 });
    const res = await search({ sourceOrder: ['apollo', 'lists'], jobTitle: 'CTO' });
    expect(res.status).toBe(200);
    expect(names(res)).toEqual(['Rita Moraes']);
    expect(res.body.sources[0]).toMatchObject({ source: 'apollo', count: 0, error: expect.stringMatching(/Apollo refused the key/) });
  });

  it("cleans Apollo's search rows as its enrichments: no NUL or lone surrogate, no 900,000-character title, no 1e309 headcount (issue 39)", async () => {
    apollo.next({
      rewrite: (json) =>
        json
          .replaceAll('"title":"Head of Sales"', `"title":"${'x'.repeat(900_000)}"`)
          .replaceAll('"first_name":"Ana"', '"first_name":"\\u0000\\ud800"')
          .replaceAll('"estimated_num_employees":120', '"estimated_num_employees":1e309'),
    });
    const res = await search({ sourceOrder: ['apollo'], jobTitle: 'Head of Sales' });
    expect(res.status).toBe(200);
    const ana = res.body.results.find((p: { name: string }) => p.name === 'Ana Souza');
    expect(ana).toMatchObject({ title: null, firstName: null, companySize: null, lastName: 'Souza' });
    expect(JSON.stringify(res.body).length).toBeLessThan(20_000);
  });

  it('refuses Apollo filters it has no parameter for, by name', async () => {
    const res = await search({ sourceOrder: ['apollo'], skills: 'negotiation' });
    expect(res.body.sources).toEqual([{ source: 'apollo', count: 0, error: "Apollo's people search cannot filter by skills" }]);
    expect(apollo.requests).toHaveLength(0);
  });

  it('answers 402 and charges nothing when the balance cannot pay for the rows', async () => {
    const poor = await app.workspace('active');
    const res = await search({ sourceOrder: ['demo'], limit: 3 }, poor.apiKey);
    expect(res.status).toBe(402);
    expect(res.body.error).toBe('insufficient_credits');
  });
});

describe('POST /api/sourcing/people/stream', () => {
  it('sends the fast sources first, Apollo when it answers, then done', async () => {
    // Apollo answers only once the client has the lists page: the order is arranged, not left to
    // a race between Apollo's latency and the lists query on a busy machine.
    const apolloAnswers = latch();
    apollo.next({ until: apolloAnswers.promise });
    try {
      const res = await app.request('POST', '/v1/api/sourcing/people/stream', {
        key: workspace.apiKey,
        body: { jobTitle: 'CTO', sourceOrder: ['apollo', 'lists'], limit: 5 },
        // Apollo answers once the lists page is out, however the machine schedules the two.
        onText: (text) => text.includes('"source":"lists"') && apolloAnswers.open(),
      });
      expect(res.status).toBe(200);
      const events = res.events!;
      expect(events).toEqual([
        { event: 'page', data: { source: 'lists', results: [expect.objectContaining({ name: 'Rita Moraes' })] } },
        { event: 'page', data: { source: 'apollo', results: [expect.objectContaining({ name: 'Bruno Lima', source: 'apollo' })] } },
        { event: 'done', data: { total: 2, sources: [{ source: 'lists', count: 1 }, { source: 'apollo', count: 1 }], creditsCharged: 2 } },
      ]);
      // No email from a search: Apollo only says whether it has one.
      expect((events[1]!.data as { results: Array<Record<string, unknown>> }).results[0]!.email).toBeUndefined();
    } finally {
      apolloAnswers.open();
    }
  });

  it('stops asking once it has limit people: a slow source still working is cancelled', async () => {
    apollo.latencyMs = 30_000; // still working whenever the others finish, however slow the machine
    try {
      const res = await app.request('POST', '/v1/api/sourcing/people/stream', {
        key: workspace.apiKey,
        body: { sourceOrder: ['apollo', 'demo'], limit: 3 },
      });
      const events = res.events!;
      expect(events.at(-1)).toEqual({
        event: 'done',
        data: { total: 3, sources: [{ source: 'demo', count: 3 }, { source: 'apollo', count: 0, error: 'cancelled' }], creditsCharged: 3 },
      });
      // On a loaded machine the call may be cancelled before it was even sent; one Apollo got must end cancelled.
      await eventually(() => expect(apollo.cancelled).toBe(apollo.requests.length), { message: 'Apollo to see its call cancelled' });
      expect(apollo.requests.length).toBeLessThanOrEqual(1);
    } finally {
      apollo.latencyMs = 0;
    }
  });

  it('a client that hangs up and does not come back cancels the provider call still running', async () => {
    apollo.latencyMs = 30_000; // still working whenever the others finish, however slow the machine
    try {
      const before = await balance();
      const controller = new AbortController();
      const res = await fetch(`${app.url}/v1/api/sourcing/people/stream`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${workspace.apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ jobTitle: 'CTO', sourceOrder: ['lists', 'apollo'] }),
        signal: controller.signal,
      });
      const reader = res.body!.getReader();
      await reader.read(); // the lists page
      await eventually(() => expect(apollo.requests).toHaveLength(1), { message: 'the call to Apollo' });
      controller.abort();
      // On a loaded machine the call may be cancelled before it was even sent; one Apollo got must end cancelled.
      await eventually(() => expect(apollo.cancelled).toBe(apollo.requests.length), { message: 'Apollo to see its call cancelled' });
      expect(apollo.requests.length).toBeLessThanOrEqual(1);
      // The page that went out was charged, once; Apollo's, never sent, was not.
      expect(before - (await balance())).toBe(1);
    } finally {
      apollo.latencyMs = 0;
    }
  });
});
