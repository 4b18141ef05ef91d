/** What an action the person took did, said on the page: an error as an alert, anything else quietly. */
export type Outcome = { kind: 'info' | 'error'; text: string };

export function OutcomeNotice({ outcome }: { outcome: Outcome | null }) {
  if (!outcome) return null;
  return (
    <div class={`notice ${outcome.kind}`} role={outcome.kind === 'error' ? 'alert' : undefined}>
      <p>{outcome.text}</p>
    </div>
  );
}
