/**
 * Loopback stand-ins for the people data providers, answering their documented requests with
 * their documented bodies and errors: Apollo (bulk match, people search), Hunter (email finder,
 * email verifier) and People Data Labs (person enrich). Each fake enforces the limits it is
 * started with as the real service does (a 429 with `Retry-After` past the rate or concurrency)
 * and counts those refusals, so a test can prove the client never exceeded them. Faults can be
 * scripted for the next requests; every request is recorded.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One person the fake services know. */
export interface WorldPerson {
  firstName: string;
  lastName: string;
  title: string;
  seniority: string;
  email: string | null;
  /** Hunter's verdict on the email: `valid`, `invalid`, `accept_all`, `unknown`. */
  verification: string;
  linkedinUrl: string;
  phone: string | null;
  company: string;
  domain: string;
  industry: string;
  employees: number;
  city: string;
  state: string;
  country: string;
}

export type Fault =
  | { status: 429; retryAfter?: string }
  | { status: 500 | 502 | 503 }
  | { status: 401 }
  /** 200 with a body that is not what the service sends. */
  | { garbage: true }
  | { delayMs: number }
  /** Answers normally once `until` settles: the test decides when, whatever the machine's speed. */
  | { until: Promise<unknown> }
  | { hang: true }
  /** Drops the connection without answering. */
  | { reset: true }
  /** Answers normally with the JSON text rewritten: what JSON.stringify cannot write (`1e309`), hostile values. */
  | { rewrite: (json: string) => string };

export interface FakeLimits {
  perSecond?: number;
  perMinute?: number;
  maxConcurrent?: number;
  /**
   * Forgiveness for transport jitter: the per-second window is this much shorter, so calls sent
   * exactly 1/perSecond apart that arrive a few milliseconds early are not refused. @default 0
   */
  slackMs?: number;
}

export interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: unknown;
  at: number;
  /** When its answer was written (ms), so a benchmark can tell the service's time from its client's. */
  doneAt?: number;
}

export interface FakeProvider {
  url: string;
  /** The service key it accepts; `accept()` adds others (a workspace's own). */
  key: string;
  accept(key: string): void;
  requests: Recorded[];
  /** Requests refused with 429 because the client went past the fake's limits. */
  readonly overLimit: number;
  readonly maxInFlight: number;
  /** Requests whose client hung up before the answer. */
  readonly cancelled: number;
  /** The most requests started within any one second (less `slackMs`). */
  maxPerSecond(slackMs?: number): number;
  /** The most requests started within any `windowMs` (they arrived less than that apart). */
  maxWithin(windowMs: number): number;
  next(fault: Fault, times?: number): void;
  /** Added to every answer (the service's own latency). */
  latencyMs: number | ((req: Recorded) => number);
  reset(): void;
  close(): Promise<void>;
}

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Sent as server-sent events instead of `body`: one `data:` line per item, then `data: [DONE]`. */
  events?: unknown[];
}

type Route = (req: Recorded) => Reply;

function send(res: ServerResponse, reply: Reply, rewrite: (json: string) => string = (json) => json): void {
  if (reply.events) {
    res.writeHead(reply.status, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', ...reply.headers });
    for (const event of reply.events) res.write(`data: ${JSON.stringify(event)}\n\n`);
    res.end('data: [DONE]\n\n');
    return;
  }
  res.writeHead(reply.status, { 'Content-Type': 'application/json; charset=utf-8', ...reply.headers });
  res.end(reply.body === undefined ? '' : rewrite(JSON.stringify(reply.body)));
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The machinery every fake shares: limits, faults, recording. */
export async function startFake(options: {
  key: string;
  limits: FakeLimits;
  authorized: (req: Recorded, key: (candidate: unknown) => boolean) => boolean;
  unauthorized: Reply;
  tooMany: (retryAfter: string) => Reply;
  serverError: (status: number) => Reply;
  route: Route;
}): Promise<FakeProvider> {
  const requests: Recorded[] = [];
  const faults: Array<{ fault: Fault; remaining: number }> = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let overLimit = 0;
  let cancelled = 0;
  const starts: number[] = [];
  const keys = new Set([options.key]);

  const takeFault = () => {
    const first = faults[0];
    if (first && --first.remaining <= 0) faults.shift();
    return first?.fault;
  };
  const within = (ms: number, now: number) => {
    let n = 0;
    for (let i = starts.length - 1; i >= 0 && starts[i]! > now - ms; i--) n++;
    return n;
  };

  const fake: FakeProvider = {
    url: '',
    key: options.key,
    accept: (key) => void keys.add(key),
    requests,
    get overLimit() {
      return overLimit;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    get cancelled() {
      return cancelled;
    },
    maxPerSecond(slackMs = 0) {
      return fake.maxWithin(1000 - slackMs);
    },
    maxWithin(windowMs) {
      let best = 0;
      for (let i = 0, j = 0; i < starts.length; i++) {
        while (starts[i]! - starts[j]! >= windowMs) j++;
        best = Math.max(best, i - j + 1);
      }
      return best;
    },
    next: (fault, times = 1) => void faults.push({ fault, remaining: times }),
    latencyMs: 0,
    reset() {
      requests.length = 0;
      starts.length = 0;
      faults.length = 0;
      overLimit = 0;
      maxInFlight = 0;
      cancelled = 0;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };

  const server = createServer(async (req, res) => {
    // Arrival is when the headers are in: the service's clock starts there, not after the body.
    const at = Date.now();
    const url = new URL(req.url ?? '/', 'http://fake');
    const recorded: Recorded = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body: await readBody(req),
      at,
    };
    requests.push(recorded);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    // Done once the answer is written (as the service counts it), or when the client hangs up first.
    let done = false;
    const finish = (hungUp: boolean) => {
      if (done) return;
      done = true;
      recorded.doneAt = Date.now();
      inFlight--;
      if (hungUp) cancelled++;
    };
    res.on('finish', () => finish(false));
    res.on('close', () => finish(!res.writableFinished));

    // The service's own limits come first, as at the real ones: a request past them does no work.
    const now = at;
    const { perSecond, perMinute, maxConcurrent, slackMs = 0 } = options.limits;
    const over =
      (perSecond !== undefined && within(1000 - slackMs, now) >= perSecond) ||
      (perMinute !== undefined && within(60_000, now) >= perMinute) ||
      (maxConcurrent !== undefined && inFlight > maxConcurrent);
    starts.push(now);
    if (over) {
      overLimit++;
      return send(res, options.tooMany('1'));
    }
    if (!options.authorized(recorded, (k) => typeof k === 'string' && keys.has(k))) return send(res, options.unauthorized);

    const fault = takeFault();
    const latency = typeof fake.latencyMs === 'function' ? fake.latencyMs(recorded) : fake.latencyMs;
    const answer = (reply: () => Reply) => {
      if (latency <= 0) return send(res, reply());
      const timer = setTimeout(() => send(res, reply()), latency);
      res.on('close', () => clearTimeout(timer));
    };
    if (!fault) return answer(() => options.route(recorded));
    if ('hang' in fault) return;
    if ('reset' in fault) return void req.socket.destroy();
    if ('delayMs' in fault) {
      const timer = setTimeout(() => send(res, options.route(recorded)), fault.delayMs);
      res.on('close', () => clearTimeout(timer));
      return;
    }
    if ('until' in fault) {
      const go = () => void (res.writableEnded || res.destroyed || send(res, options.route(recorded)));
      void fault.until.then(go, go);
      return;
    }
    if ('garbage' in fault) return answer(() => ({ status: 200, body: '<html>maintenance</html>' }));
    if ('rewrite' in fault) return send(res, options.route(recorded), fault.rewrite);
    if (fault.status === 401) return send(res, options.unauthorized);
    if (fault.status === 429) {
      const reply = options.tooMany(fault.retryAfter ?? '1');
      if (fault.retryAfter === undefined) delete reply.headers?.['Retry-After'];
      return send(res, reply);
    }
    return send(res, options.serverError(fault.status));
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

const lower = (v: unknown) => (typeof v === 'string' ? v.trim().toLowerCase() : '');
const fullName = (p: WorldPerson) => `${p.firstName} ${p.lastName}`;
const profile = (url: string) => lower(url).replace(/^https?:\/\/(www\.)?/, '').replace(/\/+$/, '');

function findPerson(
  world: WorldPerson[],
  q: { email?: unknown; linkedin?: unknown; name?: unknown; first?: unknown; last?: unknown; org?: unknown },
): WorldPerson | undefined {
  if (lower(q.email)) return world.find((p) => lower(p.email) === lower(q.email));
  if (lower(q.linkedin)) return world.find((p) => profile(p.linkedinUrl) === profile(String(q.linkedin)));
  const name = lower(q.name) || [lower(q.first), lower(q.last)].filter(Boolean).join(' ');
  const org = lower(q.org).replace(/^https?:\/\//, '').replace(/^www\./, '');
  if (!name || !org) return undefined;
  return world.find((p) => lower(fullName(p)) === name && (p.domain === org || lower(p.company) === org));
}

// ---------------------------------------------------------------------------------------------
// Apollo

function apolloPerson(p: WorldPerson, withEmail: boolean) {
  return {
    id: `ap_${p.linkedinUrl.split('/').pop()}`,
    first_name: p.firstName,
    last_name: p.lastName,
    name: fullName(p),
    title: p.title,
    seniority: p.seniority,
    departments: ['master_sales'],
    linkedin_url: p.linkedinUrl,
    email_status: p.email ? (p.verification === 'valid' ? 'verified' : 'unverified') : 'unavailable',
    ...(withEmail ? { email: p.email } : {}),
    city: p.city,
    state: p.state,
    country: p.country,
    organization: {
      name: p.company,
      primary_domain: p.domain,
      website_url: `http://www.${p.domain}`,
      industry: p.industry.toLowerCase(),
      estimated_num_employees: p.employees,
    },
  };
}

function inRanges(employees: number, ranges: unknown): boolean {
  if (!Array.isArray(ranges) || ranges.length === 0) return true;
  return ranges.some((r) => {
    const [min, max] = String(r).split(',').map((n) => (n === '' ? Infinity : Number(n)));
    return employees >= min! && employees <= (max ?? Infinity);
  });
}

export function startFakeApollo(world: WorldPerson[], limits: FakeLimits = {}): Promise<FakeProvider> {
  const anyOf = (list: unknown, value: string) =>
    !Array.isArray(list) || list.length === 0 || list.some((v) => lower(value).includes(lower(v)));
  return startFake({
    key: 'apollo-test-key',
    limits,
    authorized: (req, known) => known(req.headers['x-api-key']),
    unauthorized: { status: 401, body: { error: 'Invalid access credentials.' } },
    tooMany: (retryAfter) => ({
      status: 429,
      body: { message: 'The maximum number of api calls allowed for api/v1/people/bulk_match is 50 times per minute.' },
      headers: { 'Retry-After': retryAfter },
    }),
    serverError: (status) => ({ status, body: { error: 'Something went wrong' } }),
    route(req) {
      const body = (req.body ?? {}) as Record<string, any>;
      if (req.method === 'POST' && req.path === '/api/v1/people/bulk_match') {
        const details = body.details;
        if (!Array.isArray(details) || details.length === 0 || details.length > 10) {
          return { status: 422, body: { error: 'details must hold 1 to 10 people' } };
        }
        const matches = details.map((d: Record<string, unknown>) => {
          const found = findPerson(world, {
            email: d.email,
            linkedin: d.linkedin_url,
            name: d.name,
            first: d.first_name,
            last: d.last_name,
            org: d.domain ?? d.organization_name,
          });
          return found ? apolloPerson(found, true) : null;
        });
        const hits = matches.filter(Boolean).length;
        return {
          status: 200,
          body: {
            status: 'success',
            matches,
            credits_consumed: hits,
            total_requested_enrichments: details.length,
            unique_enriched_records: hits,
            missing_records: details.length - hits,
          },
        };
      }
      if (req.method === 'POST' && req.path === '/api/v1/mixed_people/api_search') {
        const perPage = Math.min(Number(body.per_page ?? 10), 100);
        const found = world.filter(
          (p) =>
            anyOf(body.person_titles, p.title) &&
            (!body.person_seniorities?.length || body.person_seniorities.includes(p.seniority)) &&
            anyOf(body.person_locations, `${p.city}, ${p.state}, ${p.country}`) &&
            anyOf(body.organization_locations, `${p.city}, ${p.state}, ${p.country}`) &&
            (!body.q_organization_domains_list?.length || body.q_organization_domains_list.includes(p.domain)) &&
            inRanges(p.employees, body.organization_num_employees_ranges) &&
            (!body.contact_email_status?.length ||
              body.contact_email_status.includes(apolloPerson(p, false).email_status)),
        );
        const page = Math.max(1, Number(body.page ?? 1));
        return {
          status: 200,
          body: {
            people: found.slice((page - 1) * perPage, page * perPage).map((p) => apolloPerson(p, false)),
            pagination: { page, per_page: perPage, total_entries: found.length, total_pages: Math.ceil(found.length / perPage) },
          },
        };
      }
      return { status: 404, body: { error: 'Not found' } };
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Hunter

const hunterError = (status: number, id: string, details: string): Reply => ({
  status,
  body: { errors: [{ id, code: status, details }] },
});

export function startFakeHunter(world: WorldPerson[], limits: FakeLimits = {}): Promise<FakeProvider> {
  return startFake({
    key: 'hunter-test-key',
    limits,
    authorized: (req, known) =>
      known(req.headers['x-api-key']) || known(req.query.get('api_key')) || known(req.headers.authorization?.replace(/^Bearer /, '')),
    unauthorized: hunterError(401, 'authentication_failed', 'No user found for the API key supplied'),
    tooMany: (retryAfter) => ({
      ...hunterError(429, 'too_many_requests', "You've exceeded the rate limit"),
      headers: { 'Retry-After': retryAfter },
    }),
    serverError: (status) => hunterError(status, 'server_error', 'Something went wrong on our side'),
    route(req) {
      const q = req.query;
      if (req.path === '/v2/email-finder') {
        if (!q.get('domain') && !q.get('company')) return hunterError(400, 'wrong_params', 'You are missing the domain or company parameter');
        const found = findPerson(world, {
          name: q.get('full_name'),
          first: q.get('first_name'),
          last: q.get('last_name'),
          org: q.get('domain') ?? q.get('company'),
        });
        if (!found?.email) {
          return { status: 200, body: { data: { email: null, score: null, domain: q.get('domain'), verification: null }, meta: {} } };
        }
        return {
          status: 200,
          body: {
            data: {
              first_name: found.firstName,
              last_name: found.lastName,
              email: found.email,
              score: 94,
              domain: found.domain,
              accept_all: found.verification === 'accept_all',
              position: found.title,
              twitter: null,
              linkedin_url: found.linkedinUrl,
              phone_number: found.phone,
              company: found.company,
              sources: [],
              verification: { date: '2026-11-01', status: found.verification },
            },
            meta: { params: Object.fromEntries(q) },
          },
        };
      }
      if (req.path === '/v2/email-verifier') {
        const email = lower(q.get('email'));
        if (!email.includes('@')) return hunterError(400, 'wrong_params', 'You are missing the email parameter');
        const found = world.find((p) => lower(p.email) === email);
        const status = found ? found.verification : 'invalid';
        return {
          status: 200,
          body: {
            data: {
              status,
              result: status === 'valid' ? 'deliverable' : status === 'invalid' ? 'undeliverable' : 'risky',
              score: status === 'valid' ? 96 : 40,
              email,
              regexp: true,
              gibberish: false,
              disposable: false,
              webmail: false,
              mx_records: true,
              smtp_server: true,
              smtp_check: status === 'valid',
              accept_all: status === 'accept_all',
              block: false,
              sources: [],
            },
            meta: { params: { email } },
          },
        };
      }
      return hunterError(404, 'not_found', 'This route does not exist');
    },
  });
}

// ---------------------------------------------------------------------------------------------
// People Data Labs

const pdlError = (status: number, type: string, message: string): Reply => ({
  status,
  body: { status, error: { type, message } },
});

export function startFakePdl(world: WorldPerson[], limits: FakeLimits = {}): Promise<FakeProvider> {
  return startFake({
    key: 'pdl-test-key',
    limits,
    authorized: (req, known) => known(req.headers['x-api-key']) || known(req.query.get('api_key')),
    unauthorized: pdlError(401, 'authentication_error', 'Invalid API key'),
    tooMany: (retryAfter) => ({
      ...pdlError(429, 'rate_limit_error', 'An error occurred due to requests hitting the API too quick'),
      headers: { 'Retry-After': retryAfter, 'x-ratelimit-remaining': '{"minute": 0}' },
    }),
    serverError: (status) => pdlError(status, 'server_error', 'Internal server error'),
    route(req) {
      if (req.path !== '/v5/person/enrich') return pdlError(404, 'not_found', 'Unknown route');
      const q = req.query;
      if (!q.get('profile') && !q.get('email') && !(q.get('name') && q.get('company'))) {
        return pdlError(400, 'invalid_request_error', 'Request object must contain a profile, email, or name and company');
      }
      const found = findPerson(world, { email: q.get('email'), linkedin: q.get('profile'), name: q.get('name'), org: q.get('company') });
      if (!found) return pdlError(404, 'not_found', 'No records were found matching your request');
      return {
        status: 200,
        body: {
          status: 200,
          likelihood: 9,
          data: {
            full_name: lower(fullName(found)),
            first_name: lower(found.firstName),
            last_name: lower(found.lastName),
            job_title: lower(found.title),
            job_title_levels: [found.seniority],
            job_title_role: 'sales',
            linkedin_url: profile(found.linkedinUrl),
            work_email: found.email,
            personal_emails: [`${lower(found.firstName)}.personal@example.net`],
            mobile_phone: found.phone,
            phone_numbers: found.phone ? [found.phone] : [],
            location_name: lower(`${found.city}, ${found.state}`),
            location_country: lower(found.country),
            job_company_name: lower(found.company),
            job_company_website: found.domain,
            job_company_linkedin_url: `linkedin.com/company/${found.domain.split('.')[0]}`,
            job_company_industry: lower(found.industry),
            job_company_size: '51-200',
          },
        },
        headers: { 'x-call-credits-spent': '1', 'x-ratelimit-remaining': '{"minute": 99}' },
      };
    },
  });
}

/** A small world: people at two companies, with every kind of email verdict. */
export function testWorld(): WorldPerson[] {
  const base = { country: 'Brazil', industry: 'Computer Software', state: 'SP', city: 'São Paulo' };
  return [
    { ...base, firstName: 'Ana', lastName: 'Souza', title: 'Head of Sales', seniority: 'head', email: 'ana.souza@acme.com.br', verification: 'valid', linkedinUrl: 'https://www.linkedin.com/in/ana-souza', phone: '+5511988887777', company: 'Acme Software', domain: 'acme.com.br', employees: 120 },
    { ...base, firstName: 'Bruno', lastName: 'Lima', title: 'CTO', seniority: 'c_suite', email: 'bruno@acme.com.br', verification: 'accept_all', linkedinUrl: 'https://www.linkedin.com/in/bruno-lima', phone: null, company: 'Acme Software', domain: 'acme.com.br', employees: 120 },
    { ...base, firstName: 'Carla', lastName: 'Mendes', title: 'Sales Manager', seniority: 'manager', email: 'carla.mendes@globex.com', verification: 'invalid', linkedinUrl: 'https://www.linkedin.com/in/carla-mendes', phone: null, company: 'Globex', domain: 'globex.com', employees: 2400, city: 'Curitiba', state: 'PR' },
    { ...base, firstName: 'Diego', lastName: 'Alves', title: 'VP Sales', seniority: 'vp', email: null, verification: 'unknown', linkedinUrl: 'https://www.linkedin.com/in/diego-alves', phone: '+5541977776666', company: 'Globex', domain: 'globex.com', employees: 2400, city: 'Curitiba', state: 'PR' },
  ];
}

/** `n` people at `n / 50` companies, every one findable (for benchmarks). */
export function syntheticWorld(n: number): WorldPerson[] {
  return Array.from({ length: n }, (_, i) => ({
    firstName: `First${i}`,
    lastName: `Last${i}`,
    title: 'Head of Sales',
    seniority: 'head',
    email: `person${i}@company${i % 50}.example`,
    verification: 'valid',
    linkedinUrl: `https://www.linkedin.com/in/person-${i}`,
    phone: null,
    company: `Company ${i % 50}`,
    domain: `company${i % 50}.example`,
    industry: 'Computer Software',
    employees: 120,
    city: 'São Paulo',
    state: 'SP',
    country: 'Brazil',
  }));
}
