/** Where data would be: a loading line, the server's reason it needs a plan, or what failed. */
import type { ComponentChildren } from 'preact';
import { ApiError } from '../api.ts';
import type { Loaded } from '../load.ts';

export function messageOf(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  return error instanceof Error ? error.message : String(error);
}

export function Problem({ error }: { error: unknown }) {
  if (error instanceof ApiError && error.code === 'plan_required') {
    return (
      <div class="notice plan">
        <p>
          <strong>This needs a plan.</strong> {error.message}
        </p>
      </div>
    );
  }
  return (
    <div class="notice error" role="alert">
      <p>{messageOf(error)}</p>
    </div>
  );
}

/**
 * The children once `state` holds data; until then, "Loading…" (over a placeholder of the same
 * size when one is given, so nothing below moves when the data comes) or the problem.
 */
export function Loading<T>({
  state,
  label,
  placeholder,
  children,
}: {
  state: Loaded<T>;
  label: string;
  placeholder?: ComponentChildren;
  children: (data: T) => ComponentChildren;
}) {
  if (state.status === 'error') return <Problem error={state.error} />;
  if (state.status === 'loading') {
    if (!placeholder) return <p class="muted loading">Loading {label}…</p>;
    return (
      <div class="loading placeholder">
        <p class="sr-only">Loading {label}…</p>
        <div aria-hidden="true">{placeholder}</div>
      </div>
    );
  }
  return <>{children(state.data)}</>;
}
