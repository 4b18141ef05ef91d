/** Loading data for a page: the state of one request, rerun when its dependencies change or on reload(). */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export type Loaded<T> = { status: 'loading'; data?: undefined; error?: undefined } | { status: 'ok'; data: T; error?: undefined } | { status: 'error'; error: unknown; data?: undefined };

export interface Loader<T> {
  state: Loaded<T>;
  reload(): void;
  /** Replaces the loaded data (after an edit the server confirmed), without a request. */
  set(update: (data: T) => T): void;
}

const LOADING = { status: 'loading' } as const;

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loader<T> {
  // The state remembers which inputs it answers, so new inputs read as "Loading…" from their
  // first render, never as the previous inputs' data; a reload keeps the data until the new one.
  const key = JSON.stringify(deps);
  const [state, setState] = useState<{ key: string; loaded: Loaded<T> }>({ key, loaded: LOADING });
  const [round, setRound] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const mine = ++latest.current;
    load().then(
      (data) => mine === latest.current && setState({ key, loaded: { status: 'ok', data } }),
      (error: unknown) => mine === latest.current && setState({ key, loaded: { status: 'error', error } }),
    );
    // Not on `load`: callers pass a new function each render; `key` and `round` say when to load again.
  }, [key, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  const set = useCallback(
    (update: (data: T) => T) => setState((s) => (s.loaded.status === 'ok' ? { key: s.key, loaded: { status: 'ok', data: update(s.loaded.data) } } : s)),
    [],
  );
  return { state: state.key === key ? state.loaded : LOADING, reload, set };
}
