/** A call that did not produce an answer; the cascade records it and moves on. */
export class ProviderFailure extends Error {
  constructor(
    message: string,
    /** Whether the provider was not called at all (circuit open, no turn in time). */
    readonly skipped = false,
  ) {
    super(message);
    this.name = 'ProviderFailure';
  }
}
