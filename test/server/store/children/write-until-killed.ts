/**
 * Child process for the crash test: writes for ever from several concurrent loops and prints
 * each write once it is acknowledged, until the test kills it with SIGKILL.
 * Usage: node write-until-killed.mjs DATA_DIR [one-shot]
 */
import { openEmbeddedStore } from '../../../../server/store/embedded/store.ts';

interface Item {
  _id: string;
  payload: string;
}

interface Counter {
  _id: string;
  value: number;
}

const [dir, oneShot] = process.argv.slice(2);
// `oneShot`: opened as a CLI command is, beside a server holding the store.
const store = await openEmbeddedStore(dir!, { oneShot: oneShot === 'one-shot' });
const items = store.collection<Item>('items');
const counters = store.collection<Counter>('counters');
const LOOPS = 4;

async function loop(k: number): Promise<never> {
  for (let n = 0; ; n++) {
    const _id = `item-${k}-${n}`;
    await items.insertOne({ _id, payload: 'x'.repeat(300) });
    process.stdout.write(`insert ${_id}\n`);
    const counter = await counters.findOneAndUpdate(
      { _id: `counter-${k}` },
      { $inc: { value: 1 } },
      { upsert: true, returnDocument: 'after' },
    );
    process.stdout.write(`count counter-${k} ${counter!.value}\n`);
  }
}

await Promise.all(Array.from({ length: LOOPS }, (_, k) => loop(k)));
