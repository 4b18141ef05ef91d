/**
 * Agent: the chat, streamed (text as it arrives, each tool call with what it was given and what
 * it cost), the list of past conversations, and continuing one with its conversationId.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, call, chat, type ChatEvent } from '../api.ts';
import { formatTime, plural } from '../format.ts';
import { announce } from '../live.ts';
import { useLoad } from '../load.ts';
import { Loading, messageOf, Problem } from '../problem.tsx';

const MAX_MESSAGE = 4000;

interface ToolCall {
  callId: string;
  tool: string;
  input: Record<string, unknown>;
  result?: { isError: boolean; creditsCharged: number; error?: string };
  /** A tool's JSON result read back from a stored conversation. */
  stored?: string;
}

/** One exchange: what the user asked and what came back, built up as the events arrive. */
interface Turn {
  id: number;
  user: string;
  /** The reply in order: text pieces and tool calls as they came. */
  parts: Array<{ kind: 'text'; text: string } | { kind: 'tool'; call: ToolCall }>;
  done?: { creditsCharged: number; steps: number };
  error?: unknown;
  /** A past message read back from a stored conversation (tool results shown as data). */
  stored?: boolean;
}

/** A tool's arguments in one short line: `name: "Ana", limit: 5`. */
export function summarize(input: Record<string, unknown>, max = 140): string {
  const text = Object.entries(input)
    .map(([key, value]) => {
      const shown = JSON.stringify(value) ?? String(value);
      return `${key}: ${shown.length > 60 ? `${shown.slice(0, 57)}…` : shown}`;
    })
    .join(', ');
  if (!text) return 'no arguments';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

let turnIds = 0;

/** A stored conversation's messages as turns: each user message and the messages after it. */
function turnsOf(messages: Array<{ role: 'user' | 'assistant' | 'tool'; content: string }>): Turn[] {
  const turns: Turn[] = [];
  for (const m of messages) {
    if (m.role === 'user' || turns.length === 0) {
      turns.push({ id: ++turnIds, user: m.role === 'user' ? m.content : '', parts: [], stored: true });
      if (m.role === 'user') continue;
    }
    const turn = turns[turns.length - 1]!;
    if (m.role === 'assistant' && m.content) turn.parts.push({ kind: 'text', text: m.content });
    if (m.role === 'tool') turn.parts.push({ kind: 'tool', call: { callId: `stored-${turn.parts.length}`, tool: 'tool', input: {}, stored: m.content } });
  }
  return turns;
}

export function Agent() {
  const conversations = useLoad(() => call('listConversations'), []);
  // Said before anything is typed: without a model the agent cannot answer (issue 43).
  const catalog = useLoad(() => call('listProviders'), []);
  const model = catalog.state.status === 'ok' ? catalog.state.data.languageModel : null;
  const noModel = model !== null && !model.configured;
  const [conversationId, setConversationId] = useState<string | null>(null);
  const [turns, setTurns] = useState<Turn[]>([]);
  const [message, setMessage] = useState('');
  const [busy, setBusy] = useState(false);
  const [opening, setOpening] = useState<unknown>(null);
  const abort = useRef<AbortController | null>(null);
  const input = useRef<HTMLTextAreaElement>(null);
  const log = useRef<HTMLOListElement>(null);

  useEffect(() => () => abort.current?.abort(), []);
  useEffect(() => {
    const el = log.current?.lastElementChild;
    if (el && busy) el.scrollIntoView({ block: 'end' });
  }, [turns, busy]);

  async function open(id: string | null) {
    abort.current?.abort();
    setOpening(null);
    setConversationId(id);
    setTurns([]);
    if (id === null) {
      input.current?.focus();
      return;
    }
    try {
      const conversation = await call('getConversation', { conversationId: id });
      setTurns(turnsOf(conversation.messages));
      announce(`Opened “${conversation.title}”, ${plural(conversation.messages.length, 'message')}.`);
      input.current?.focus();
    } catch (err) {
      setOpening(err);
    }
  }

  /** Applies one event to the turn being answered. */
  function apply(turnId: number, event: ChatEvent) {
    setTurns((all) =>
      all.map((turn) => {
        if (turn.id !== turnId) return turn;
        const parts = [...turn.parts];
        const last = parts[parts.length - 1];
        switch (event.event) {
          case 'text':
            if (last?.kind === 'text') parts[parts.length - 1] = { kind: 'text', text: last.text + event.data.delta };
            else parts.push({ kind: 'text', text: event.data.delta });
            return { ...turn, parts };
          case 'tool_call':
            parts.push({ kind: 'tool', call: { callId: event.data.callId, tool: event.data.tool, input: event.data.input } });
            return { ...turn, parts };
          case 'tool_result': {
            const { isError, creditsCharged, error } = event.data;
            return {
              ...turn,
              parts: parts.map((p) =>
                p.kind === 'tool' && p.call.callId === event.data.callId
                  ? { kind: 'tool', call: { ...p.call, result: { isError, creditsCharged, ...(error ? { error } : {}) } } }
                  : p,
              ),
            };
          }
          case 'error':
            return { ...turn, error: new ApiError(500, event.data.error, event.data.message ?? event.data.error) };
          case 'done':
            return { ...turn, done: { creditsCharged: event.data.creditsCharged, steps: event.data.steps } };
        }
        return turn;
      }),
    );
  }

  async function send(event?: Event) {
    event?.preventDefault();
    const text = message.trim();
    if (!text || busy) return;
    const turn: Turn = { id: ++turnIds, user: text, parts: [] };
    setTurns((all) => [...all, turn]);
    setMessage('');
    setBusy(true);
    announce('The agent is answering…');
    const controller = new AbortController();
    abort.current = controller;
    let done: { conversationId: string; creditsCharged: number; steps: number } | null = null;
    try {
      await chat(
        { message: text, ...(conversationId ? { conversationId } : {}) },
        (e) => {
          if (e.event === 'done') done = e.data;
          apply(turn.id, e);
        },
        controller.signal,
      );
      const finished = done as { conversationId: string; creditsCharged: number; steps: number } | null;
      if (finished) {
        setConversationId(finished.conversationId);
        announce(`The agent answered${finished.steps ? `, using ${plural(finished.steps, 'tool')} for ${plural(finished.creditsCharged, 'credit')}` : ''}.`);
      }
      conversations.reload();
    } catch (err) {
      if ((err as Error).name === 'AbortError') return;
      setTurns((all) => all.map((t) => (t.id === turn.id ? { ...t, error: err } : t)));
      announce(`The agent could not answer: ${messageOf(err)}`);
    } finally {
      if (abort.current === controller) abort.current = null;
      setBusy(false);
    }
  }

  return (
    <>
      <h1 tabIndex={-1}>Agent</h1>
      <div class="agent">
        <section class="conversations" aria-labelledby="conversations-heading">
          <h2 id="conversations-heading">Conversations</h2>
          <button type="button" onClick={() => open(null)} disabled={busy}>
            New conversation
          </button>
          <Loading state={conversations.state} label="the conversations">
            {({ conversations: list }) =>
              list.length === 0 ? (
                <p class="muted">None yet.</p>
              ) : (
                <ul>
                  {list.map((c) => (
                    <li key={c.conversationId}>
                      <button
                        type="button"
                        class="conversation"
                        aria-current={c.conversationId === conversationId ? 'true' : undefined}
                        disabled={busy}
                        onClick={() => open(c.conversationId)}
                      >
                        <span class="title">{c.title}</span>
                        <span class="muted small">{formatTime(c.updatedAt)}</span>
                      </button>
                    </li>
                  ))}
                </ul>
              )
            }
          </Loading>
        </section>

        <section class="chat" aria-labelledby="chat-heading">
          <h2 id="chat-heading">{conversationId ? 'Conversation' : 'New conversation'}</h2>
          {model && !model.configured && (
            <p class="notice" role="status">
              <strong>No language model is configured on this server</strong>, so the agent cannot answer. The operator sets{' '}
              <code>{model.variable}</code> (an OpenAI-compatible endpoint) to enable it; campaigns still get messages from the built-in writer.
            </p>
          )}
          {opening !== null && <Problem error={opening} />}
          {turns.length === 0 ? (
            <p class="muted">
              Ask for people, companies or a CNPJ lookup, or about your campaigns and credits. The agent uses prospecta’s own operations; each
              tool call is charged as if you made it, and chatting is free.
            </p>
          ) : (
            <ol class="turns" ref={log} aria-label="Conversation so far">
              {turns.map((turn) => (
                <TurnView key={turn.id} turn={turn} answering={busy && turn === turns[turns.length - 1]} />
              ))}
            </ol>
          )}
          <form class="composer" onSubmit={send}>
            <label for="agent-message">Message</label>
            <textarea
              id="agent-message"
              ref={input}
              rows={3}
              maxLength={MAX_MESSAGE}
              disabled={noModel}
              value={message}
              aria-describedby="agent-hint"
              onInput={(e) => setMessage(e.currentTarget.value)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) void send(e);
              }}
            />
            <p id="agent-hint" class="muted small">
              Enter sends; Shift+Enter starts a new line.
            </p>
            <button type="submit" class="primary" disabled={busy || noModel || !message.trim()}>
              {busy ? 'Answering…' : 'Send'}
            </button>
          </form>
        </section>
      </div>
    </>
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

function ToolView({ call: c }: { call: ToolCall }) {
  if (c.stored !== undefined) {
    return (
      <details class="tool">
        <summary>Tool result</summary>
        <pre>{c.stored.length > 2000 ? `${c.stored.slice(0, 2000)}…` : c.stored}</pre>
      </details>
    );
  }
  const state = !c.result
    ? 'running…'
    : c.result.isError
      ? `failed${c.result.error ? ` (${c.result.error})` : ''}, no credits`
      : `${plural(c.result.creditsCharged, 'credit')}`;
  return (
    <div class={`tool${c.result?.isError ? ' failed' : ''}`}>
      <span class="tool-name">
        <span class="sr-only">Tool call: </span>
        <code>{c.tool}</code>
      </span>{' '}
      <span class="tool-input">{summarize(c.input)}</span> <span class="tool-cost">{state}</span>
    </div>
  );
}
