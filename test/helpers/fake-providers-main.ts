/**
 * The fake providers in a process of their own, for tests whose own thread blocks on synchronous
 * HTTP (the add-on harness): prints their URLs and keys as one JSON line, serves until killed.
 */
import { dataBlocks, instructionOf, startFakeLlm } from './fake-llm.ts';
import { startFakeApollo, startFakeHunter, startFakePdl, syntheticWorld, testWorld } from './fake-providers.ts';

// FAKE_WORLD=N adds N synthetic people (benchmarks) to the tests' own four.
const world = [...testWorld(), ...syntheticWorld(Number(process.env.FAKE_WORLD ?? 0))];
const [apollo, hunter, pdl] = await Promise.all([startFakeApollo(world), startFakeHunter(world), startFakePdl(world)]);
// A model that answers AI columns with the instruction and the row's first cell, research plainly.
const llm = await startFakeLlm((body) => {
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
