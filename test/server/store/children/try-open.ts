/**
 * Child process for the lock tests: tries to open the embedded store in DATA_DIR and prints the
 * outcome as one JSON line. Usage: node try-open.mjs DATA_DIR
 */
import { openEmbeddedStore } from '../../../../server/store/embedded/store.ts';

try {
  const store = await openEmbeddedStore(process.argv[2]!);
  await store.close();
  console.log(JSON.stringify({ opened: true }));
} catch (err) {
  const { code, message } = err as { code?: unknown; message: string };
  console.log(JSON.stringify({ opened: false, code, message }));
}
