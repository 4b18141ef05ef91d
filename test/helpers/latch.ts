/**
 * A promise the test settles itself: given to a fake as `{ until: latch.promise }`, it holds the
 * fake's answer until the test calls `open()`, so an overlap or an order is arranged, not hoped
 * for within a delay. (Promise.withResolvers, which Node 20 lacks.)
 */
export interface Latch {
  promise: Promise<void>;
  open(): void;
}

export function latch(): Latch {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
