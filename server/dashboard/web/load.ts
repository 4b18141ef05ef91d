/** Loading data for a page: the state of one request, rerun when its dependencies change or on reload(). */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export type Loaded<T> = { status: 'loading'; data?: undefined; error?: undefined } | { status: 'ok'; data: T; error?: undefined } | { status: 'error'; error: unknown; data?: undefined };

export interface Loader<T> {
  state: Loaded<T>;
  reload(): void;
  /** Replaces the loaded data (after an edit the server confirmed), without a request. */
  set(update: (data: T) => T): void;
}

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loader<T> {
  const [state, setState] = useState<Loaded<T>>({ status: 'loading' });
  const [round, setRound] = useState(0);
  const latest = useRef(0);
  const lastRound = useRef(0);
  useEffect(() => {
    const mine = ++latest.current;
    // A reload keeps what is shown until the new data comes; other inputs show "Loading…" at once.
    const isReload = round !== lastRound.current;
    lastRound.current = round;
    setState((s) => (isReload && s.status === 'ok' ? s : { status: 'loading' }));
    load().then(
      (data) => mine === latest.current && setState({ status: 'ok', data }),
      (error: unknown) => mine === latest.current && setState({ status: 'error', error }),
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  const set = useCallback((update: (data: T) => T) => setState((s) => (s.status === 'ok' ? { status: 'ok', data: update(s.data) } : s)), []);
  return { state, reload, set };
}
