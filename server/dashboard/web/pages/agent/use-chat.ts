/**
 * The conversation on screen: opening a stored one or starting anew, and sending a message, its
 * answer streamed into the last turn. A new send or open stops the answer under way, and so does
 * leaving the page.
 */
import type { RefObject } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, chat } from '../../api.ts';
import { messageOf } from '../../components/problem.tsx';
import { plural } from '../../format.ts';
import { announce } from '../../live.ts';
import { applyEvent, newTurn, turnsOf, type Turn } from './turns.ts';

type Done = { conversationId: string; creditsCharged: number; steps: number };

/** Streams the answer to `text`, each event applied to its turn through `update`; says how it finished (null: no `done` came). */
async function streamAnswer(text: string, conversationId: string | null, update: (change: (turn: Turn) => Turn) => void, signal: AbortSignal): Promise<Done | null> {
  let done: Done | null = null;
  await chat(
    { message: text, ...(conversationId ? { conversationId } : {}) },
    (e) => {
      if (e.event === 'done') done = e.data;
      update((turn) => applyEvent(turn, e));
    },
    signal,
  );
  return done;
}

/** `input` is the message box, focused when a conversation opens; `onAnswered` runs after each answer (the list is read again). */
export function useChat(input: RefObject<HTMLTextAreaElement | null>, onAnswered: () => void) {
  const [conversationId, setConversationId] = useState<string | null>(null);
  const [turns, setTurns] = useState<Turn[]>([]);
  const [busy, setBusy] = useState(false);
  const [opening, setOpening] = useState<unknown>(null);
  const abort = useRef<AbortController | null>(null);
  useEffect(() => () => abort.current?.abort(), []);

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

  async function send(text: string) {
    const turn = newTurn(text);
    const update = (change: (t: Turn) => Turn) => setTurns((all) => all.map((t) => (t.id === turn.id ? change(t) : t)));
    setTurns((all) => [...all, turn]);
    setBusy(true);
    announce('The agent is answering…');
    const controller = new AbortController();
    abort.current = controller;
    try {
      const finished = await streamAnswer(text, conversationId, update, controller.signal);
      if (finished) {
        setConversationId(finished.conversationId);
        announce(`The agent answered${finished.steps ? `, using ${plural(finished.steps, 'tool')} for ${plural(finished.creditsCharged, 'credit')}` : ''}.`);
      }
      onAnswered();
    } catch (err) {
      if ((err as Error).name === 'AbortError') return;
      update((t) => ({ ...t, error: err }));
      announce(`The agent could not answer: ${messageOf(err)}`);
    } finally {
      if (abort.current === controller) abort.current = null;
      setBusy(false);
    }
  }

  return { conversationId, turns, busy, opening, open, send };
}
