/**
 * Confirming what cannot be undone (revoking a key, deleting a watch) in a native modal `<dialog>`:
 * Cancel has the focus first, and when the dialog closes the focus goes back to the button that
 * opened it, or, once that button is gone (its row revoked or deleted), to `fallback`.
 */
import type { ComponentChildren, RefObject } from 'preact';
import { useRef, useState } from 'preact/hooks';

export interface Confirmation<T> {
  dialog: RefObject<HTMLDialogElement | null>;
  /** What the open dialog asks about. */
  target: T | null;
  ask(target: T, opener: HTMLButtonElement): void;
  /** Runs `action` on the target, then closes the dialog. */
  confirm(action: (target: T) => Promise<void>): Promise<void>;
  close(): void;
  closed(): void;
}

export function useConfirmation<T>(fallback: () => HTMLElement | null): Confirmation<T> {
  const dialog = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLButtonElement | null>(null);
  const [target, setTarget] = useState<T | null>(null);
  return {
    dialog,
    target,
    ask(next, button) {
      opener.current = button;
      setTarget(next);
      dialog.current?.showModal();
    },
    async confirm(action) {
      if (target === null) return;
      await action(target);
      dialog.current?.close();
    },
    close: () => dialog.current?.close(),
    closed() {
      setTarget(null);
      (opener.current?.isConnected ? opener.current : fallback())?.focus();
    },
  };
}

/** The dialog: `title` names it, `children` says what follows (ids `<id>-heading` and `<id>-text`). */
export function ConfirmDialog<T>({ id, confirmation, title, busy, onConfirm, children }: { id: string; confirmation: Confirmation<T>; title: ComponentChildren; busy: boolean; onConfirm: (target: T) => Promise<void>; children: ComponentChildren }) {
  return (
    <dialog ref={confirmation.dialog} aria-labelledby={`${id}-heading`} aria-describedby={`${id}-text`} onClose={confirmation.closed}>
      <h2 id={`${id}-heading`}>{title}</h2>
      <p id={`${id}-text`}>{children}</p>
      <div class="actions">
        <button type="button" autoFocus onClick={confirmation.close}>
          Cancel
        </button>
        <button type="button" class="danger" disabled={busy} onClick={() => void confirmation.confirm(onConfirm)}>
          Confirm
        </button>
      </div>
    </dialog>
  );
}
