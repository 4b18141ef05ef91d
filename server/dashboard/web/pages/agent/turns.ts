/**
 * A conversation as the page shows it: turns (what the user asked and what came back), built up
 * from the chat's events as they arrive, or read back from a stored conversation.
 */
import { ApiError, type ChatEvent } from '../../api.ts';

export interface ToolCall {
  callId: string;
  tool: string;
  input: Record<string, unknown>;
  result?: { isError: boolean; creditsCharged: number; error?: string };
  /** A tool's JSON result read back from a stored conversation. */
  stored?: string;
}

/** One exchange: what the user asked and what came back, built up as the events arrive. */
export interface Turn {
  id: number;
  user: string;
  /** The reply in order: text pieces and tool calls as they came. */
  parts: Array<{ kind: 'text'; text: string } | { kind: 'tool'; call: ToolCall }>;
  done?: { creditsCharged: number; steps: number };
  error?: unknown;
  /** A past message read back from a stored conversation (tool results shown as data). */
  stored?: boolean;
}

let turnIds = 0;

export const newTurn = (user: string): Turn => ({ id: ++turnIds, user, parts: [] });

/** A stored conversation's messages as turns: each user message and the messages after it. */
export function turnsOf(messages: Array<{ role: 'user' | 'assistant' | 'tool'; content: string }>): Turn[] {
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

/** The turn being answered once one more event of the chat has come. */
export function applyEvent(turn: Turn, event: ChatEvent): Turn {
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
          p.kind === 'tool' && p.call.callId === event.data.callId ? { kind: 'tool', call: { ...p.call, result: { isError, creditsCharged, ...(error ? { error } : {}) } } } : p,
        ),
      };
    }
    case 'error':
      return { ...turn, error: new ApiError(500, event.data.error, event.data.message ?? event.data.error) };
    case 'done':
      return { ...turn, done: { creditsCharged: event.data.creditsCharged, steps: event.data.steps } };
  }
  return turn;
}
