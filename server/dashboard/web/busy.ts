/** One action at a time on a page's rows: which row's action is under way (its buttons disabled meanwhile). */
import { useState } from 'preact/hooks';

export function useBusy() {
  const [busy, setBusy] = useState<string | null>(null);

  /** Runs `task` for the row `id`; what it throws goes to `failed`, and the row is free again either way. */
  async function run(id: string, task: () => Promise<void>, failed: (err: unknown) => void) {
    setBusy(id);
    try {
      await task();
    } catch (err) {
      failed(err);
    } finally {
      setBusy(null);
    }
  }

  return { busy, run };
}
