/**
 * The curl examples a newcomer copies from the README and docs/api.md, read against the registry:
 * each names an operation that exists, carries a credential when the operation needs one, sends
 * its body as JSON (curl's `-d` alone is a form, which the server refuses with 415), and the body
 * is one the server's own validators accept, with check digits right in any CNPJ. A paid company
 * search or export asks for active companies (`registrationStatuses: ["ATIVA"]`): without it,
 * closed companies come too and each row written costs a credit (issue 43).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { operations } from '../../shared/operations/index.ts';
import type { Operation } from '../../shared/operations/types.ts';
import { checkCnpj } from '../../shared/cnpj.ts';
import { compileValidators } from '../../server/pipeline/validate.ts';

const DOCS = ['README.md', 'docs/api.md'];
/** Operations charged per company row written, whose examples must ask for active companies. */
const PER_ROW = new Set(['searchCompanies', 'streamCompanies', 'exportCompanies']);

interface Example {
  where: string;
  method: string;
  path: string;
  headers: string[];
  body: string | undefined;
}

/** Every curl command of the shell blocks: a line continued by `\\`, or inside an open quote, is read as one. */
function examples(file: string): Example[] {
  const text = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
  const found: Example[] = [];
  for (const [, block] of text.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const commands: string[] = [];
    for (const line of block!.replace(/\\\n\s*/g, ' ').split('\n')) {
      const last = commands.at(-1);
      const open = last !== undefined && /^curl\b/.test(last) && (last.split("'").length - 1) % 2 === 1;
      if (open) commands[commands.length - 1] += `\n${line}`;
      else commands.push(line);
    }
    for (const command of commands.filter((c) => /^curl\b/.test(c) && c.includes('/v1/'))) {
      const body = /-d '([^']*)'/.exec(command)?.[1];
      found.push({
        where: `${file}: ${command.slice(0, 70)}`,
        method: /-X (\w+)/.exec(command)?.[1] ?? (body === undefined ? 'GET' : 'POST'),
        path: /\/v1(\/[^\s'"?|]*)/.exec(command)![1]!,
        headers: [...command.matchAll(/-H (["'])(.+?)\1/g)].map(([, , header]) => header!),
        body,
      });
    }
  }
  return found;
}

const all = DOCS.flatMap(examples);
const validate = compileValidators(operations);

/** The registry's operation answering `method path` (a `$JOB` in the example fills `{jobId}`). */
function operationOf(method: string, path: string): string | undefined {
  return Object.entries(operations).find(([, op]) => op.method === method && new RegExp(`^${op.path.replace(/\{\w+\}/g, '[^/]+')}$`).test(path))?.[0];
}

describe('the curl examples of the README and docs/api.md', () => {
  it('are found (the README has its quick start, exports and changes)', () => {
    expect(all.filter((e) => e.where.startsWith('README.md')).length).toBeGreaterThanOrEqual(7);
  });

  it.each(all.map((e) => [e.where, e] as const))('%s: a request the server takes', (_, example) => {
    const id = operationOf(example.method, example.path);
    expect(id, `no operation answers ${example.method} ${example.path}`).toBeDefined();
    const op: Operation = operations[id as keyof typeof operations];
    if (op.scope !== null || op.actsFor) expect(example.headers.some((h) => /^Authorization: Bearer \S/.test(h)), 'a credential').toBe(true);
    if (example.body === undefined) return;
    expect(example.headers.map((h) => h.toLowerCase()), 'a JSON body says so').toContain('content-type: application/json');
    const body = JSON.parse(example.body) as Record<string, unknown>;
    const checked = validate(id!, 'body', body);
    expect(checked.ok ? 'valid' : checked.message).toBe('valid');
    for (const cnpj of (body.cnpjs as string[] | undefined) ?? []) expect(checkCnpj(cnpj), cnpj).toMatchObject({ status: 'valid' });
    if (PER_ROW.has(id!)) expect(body.registrationStatuses, 'a paid company search asks for active companies').toEqual(['ATIVA']);
  });
});
