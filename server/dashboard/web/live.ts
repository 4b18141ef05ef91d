/** The one polite live region: what finished or failed in the background, said once to screen readers. */
import { signal } from '@preact/signals';

export const liveMessage = signal('');

export function announce(text: string): void {
  // The same text twice in a row is still news ("Saved." after another save): clear first.
  liveMessage.value = '';
  queueMicrotask(() => (liveMessage.value = text));
}
