/**
 * The conversation so far, a turn an item: the user's message, then the agent's reply as it
 * streams (text and tool calls in order), what failed, and what its tools cost. While an answer
 * comes, the newest turn is kept in view.
 */
import { useEffect, useRef } from 'preact/hooks';
import { Problem } from '../../components/problem.tsx';
import { plural } from '../../format.ts';
import { ToolView } from './tool-view.tsx';
import type { Turn } from './turns.ts';

export function Transcript({ turns, busy }: { turns: Turn[]; busy: boolean }) {
  const log = useRef<HTMLOListElement>(null);
  useEffect(() => {
    const el = log.current?.lastElementChild;
    if (el && busy) el.scrollIntoView({ block: 'end' });
  }, [turns, busy]);

  if (turns.length === 0) {
    return (
      <p class="muted">
        Ask for people, companies or a CNPJ lookup, or about your campaigns and credits. The agent uses prospecta’s own operations; each
        tool call is charged as if you made it, and chatting is free.
      </p>
    );
  }
  return (
    <ol class="turns" ref={log} aria-label="Conversation so far">
      {turns.map((turn) => (
        <TurnView key={turn.id} turn={turn} answering={busy && turn === turns[turns.length - 1]} />
      ))}
    </ol>
  );
}

function TurnView({ turn, answering }: { turn: Turn; answering: boolean }) {
  return (
    <li class="turn">
      {turn.user && (
        <div class="from-user">
          <span class="sr-only">You: </span>
          <p>{turn.user}</p>
        </div>
      )}
      <div class="from-agent" aria-busy={answering ? 'true' : undefined}>
        <span class="sr-only">Agent: </span>
        {turn.parts.map((part, i) =>
          part.kind === 'text' ? <p key={i} class="reply">{part.text}</p> : <ToolView key={part.call.callId + i} call={part.call} />,
        )}
        {answering && turn.parts.length === 0 && <p class="muted">Thinking…</p>}
        {turn.error !== undefined && <Problem error={turn.error} />}
        {turn.done && turn.done.steps > 0 && (
          <p class="muted small">
            {plural(turn.done.steps, 'tool call')}, {plural(turn.done.creditsCharged, 'credit')} in all.
          </p>
        )}
      </div>
    </li>
  );
}
