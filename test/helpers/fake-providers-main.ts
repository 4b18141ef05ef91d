/**
 * The fake providers in a process of their own, for tests whose own thread blocks on synchronous
 * HTTP (the add-on harness): prints their URLs and keys as one JSON line, serves until killed.
 */
import { dataBlocks, instructionOf, startFakeLlm, turnReply, type ChatBody } from './fake-llm.ts';
import { startFakeApollo, startFakeHunter, startFakePdl, syntheticWorld, testWorld } from './fake-providers.ts';

// FAKE_WORLD=N adds N synthetic people (benchmarks) to the tests' own four.
const world = [...testWorld(), ...syntheticWorld(Number(process.env.FAKE_WORLD ?? 0))];
const [apollo, hunter, pdl] = await Promise.all([startFakeApollo(world), startFakeHunter(world), startFakePdl(world)]);
/**
 * The agent (a request offering tools): first it looks up the CNPJs of the selection it was given
 * and checks the balance; then it answers with what it saw, so a test can tell that the selection
 * and the earlier messages reached it.
 */
function agentTurn(body: ChatBody) {
  const lastUser = body.messages.map((m) => m.role).lastIndexOf('user');
  const content = body.messages[lastUser]!.content;
  const block = /<(data-[0-9a-f]+) label="selection">\n([\s\S]*?)\n<\/\1>/.exec(content);
  const selection = block ? (JSON.parse(block[2]!) as { header: string[]; rows: string[][] }) : null;
  if (!body.messages.slice(lastUser).some((m) => m.role === 'tool')) {
    const cnpjs = selection ? selection.rows.flat().filter((cell) => /^\d{14}$/.test(cell)) : [];
    return turnReply(body, { calls: [{ name: 'get_credits', arguments: {} }, ...(cnpjs.length ? [{ name: 'lookup_cnpj_batch', arguments: { cnpjs } }] : [])] });
  }
  const asked = body.messages.filter((m) => m.role === 'user').length;
  const seen = selection ? `${selection.rows.length} row(s) under ${selection.header.join(', ')}` : 'no selection';
  return turnReply(body, { text: `Message ${asked} of this conversation; I saw ${seen}.` });
}

// A model that answers AI columns with the instruction and the row's first cell, research plainly.
const llm = await startFakeLlm((body) => {
  if (body.tools?.length) return agentTurn(body);
  const { row, record } = dataBlocks(body) as { row?: Record<string, string>; record?: Record<string, string> };
  if (row) return JSON.stringify({ value: `${instructionOf(body)}: ${Object.values(row)[0] ?? ''}` });
  return JSON.stringify({ answer: `About ${record?.company ?? 'them'}: nothing in the row says.`, citations: [] });
});
process.stdout.write(
  JSON.stringify({
    APOLLO_URL: apollo.url,
    APOLLO_API_KEY: apollo.key,
    HUNTER_URL: hunter.url,
    HUNTER_VERIFIER_URL: hunter.url,
    HUNTER_API_KEY: hunter.key,
    PDL_URL: pdl.url,
    PDL_API_KEY: pdl.key,
    LLM_BASE_URL: llm.baseUrl,
    LLM_API_KEY: llm.key,
    LLM_MODEL: 'fake-model',
  }) + '\n',
);
