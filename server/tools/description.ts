/**
 * A tool's description, from its registry entry: what it does, what it costs and what it needs.
 * The registry's descriptions are written for the HTTP reference, so the sentences (or clauses)
 * that speak of statuses, media types or event streams are left out: a tool caller never sees
 * them, and a model reading "answers 409" learns nothing it can act on.
 */
import type { CreditRule, Operation } from '../../shared/operations/types.ts';

/**
 * A sentence or clause about HTTP rather than about the tool: a status ("answers 400", "409 when
 * …", "409 `already_revoked`"; not "up to 500 CNPJs"), a media type, the stream's events.
 */
const HTTP_TALK = /\b(?:answers|HTTP|status)\s+[1-5]\d\d\b|\b[1-5]\d\d\s+(?:when|if|while|`)|HTTP|text\/event-stream|x-events|\bAnswers `|\bevents?\b|Accept:/;

function withoutHttpTalk(text: string): string {
  const sentences = text.match(/[^.!?]+(?:[.!?]+(?=\s|$)|$)/g) ?? [];
  return sentences
    .map((sentence) => {
      const clauses = sentence.trim().split(/;\s+/);
      const kept = clauses.filter((clause) => !HTTP_TALK.test(clause));
      if (!kept.length) return '';
      const joined = kept.join('; ');
      return /[.!?]$/.test(joined) ? joined : `${joined}.`;
    })
    .filter(Boolean)
    .join(' ');
}

function costOf(rule: CreditRule): string {
  switch (rule.rule) {
    case 'free':
      return 'Free.';
    case 'per_result':
      return `Costs ${rule.cost} credit${rule.cost === 1 ? '' : 's'} per ${rule.unit} returned.`;
    case 'fixed':
      return `Costs ${rule.cost} credit${rule.cost === 1 ? '' : 's'}${rule.costWith ? `, ${rule.costWith.cost} with \`${rule.costWith.field}\`` : ''}.`;
    case 'provider_sum':
      return 'Costs the sum of the costs of the providers that returned data.';
  }
}

/** Words by which a registry description already says what the operation costs. */
const PRICE_STATED = /\bcosts\b|\bno credits\b|\bfree\b/i;

export function toolDescription(op: Operation): string {
  const parts = [withoutHttpTalk(op.description ?? op.summary)];
  // The registry's own words on the price win; the rule speaks when they say nothing.
  if (!PRICE_STATED.test(parts[0]!)) parts.push(costOf(op.credits));
  if (op.stream) parts.push('Returns every page merged; with a progress token, one progress notification per page.');
  if (op.requiresPlan) parts.push('Needs an active plan.');
  return parts.filter(Boolean).join(' ');
}
