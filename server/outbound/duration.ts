/** `250 ms`, `30 s`: a wait or a timeout, for messages. */
export const duration = (ms: number) => (ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`);
