/**
 * One personalized message per row: a connection note (≤ 300), an email subject (≤ 300) and body
 * (≤ 5000), from the campaign's offering, sender, tone, context and language and the row's cells.
 * With a model configured, the model writes them (JSON checked against the limits, one retry);
 * otherwise, or when the model fails, the built-in writer (built-in-writer.ts) composes them from
 * the recognised columns in Portuguese, English or Spanish. Rows are written concurrently, 25 at most.
 */
import Bottleneck from 'bottleneck';
import type { Prospect } from '../../shared/types.ts';
import { LlmError, type Llm } from '../ai/llm.ts';
import { framing } from '../ai/untrusted-data.ts';
import { builtInMessages, LIMITS, type Brief, type Written } from './built-in-writer.ts';
import type { TraceContext } from '../lib/trace-context.ts';

export type { Brief };

export interface Message extends Written {
  /** Who wrote it: the model, or the built-in writer. */
  writer: Prospect['writer'];
}

function parseMessage(text: string): Omit<Message, 'writer'> | null {
  try {
    const m = JSON.parse(text) as Record<string, unknown>;
    const fields = ['connectionNote', 'emailSubject', 'emailBody'] as const;
    if (!fields.every((f) => typeof m[f] === 'string' && (m[f] as string).trim() !== '' && (m[f] as string).length <= LIMITS[f])) return null;
    return { connectionNote: (m.connectionNote as string).trim(), emailSubject: (m.emailSubject as string).trim(), emailBody: (m.emailBody as string).trim() };
  } catch {
    return null;
  }
}

async function modelMessage(llm: Llm, brief: Brief, values: Record<string, string>, workspaceId: string, signal: AbortSignal, trace: TraceContext | undefined): Promise<Message | null> {
  const frame = framing();
  const messages = [
    {
      role: 'system' as const,
      content:
        'You write one personalized B2B outreach message for the person in the row: a professional-network connection note ' +
        `(at most ${LIMITS.connectionNote} characters), an email subject (at most ${LIMITS.emailSubject}) and an email body ` +
        `(at most ${LIMITS.emailBody}). Write in ${brief.language?.trim() || 'Portuguese'}, in the requested tone, signed by the sender. ` +
        'Use only facts from the campaign and the row. Reply with a JSON object {"connectionNote": "...", "emailSubject": "...", "emailBody": "..."}. ' +
        frame.rules,
    },
    {
      role: 'user' as const,
      content: `Campaign:\n${frame.wrap('campaign', brief)}\n\nRow:\n${frame.wrap('row', values)}`,
    },
  ];
  for (let attempt = 0; attempt < 2; attempt++) {
    const answer = await llm.chat({ messages, maxTokens: 1500, json: true, workspaceId, purpose: 'outreach_message', signal, trace });
    if (frame.leaks(answer.text)) continue;
    const parsed = parseMessage(answer.text);
    if (parsed) return { ...parsed, writer: 'model' };
  }
  return null;
}

export class MessageWriter {
  /** Rows written at once; the model's own limiter may allow fewer. */
  private readonly limiter = new Bottleneck({ maxConcurrent: 25 });

  constructor(private readonly llm: Llm | null) {}

  /** A message per row, in order. The model's failures fall back to the built-in writer. */
  write(brief: Brief, rows: Array<Record<string, string>>, workspaceId: string, signal: AbortSignal, trace?: TraceContext): Promise<Message[]> {
    // Written for the whole batch at once (cheap), so rows that differ only by name read differently.
    const builtIn = builtInMessages(brief, rows).map((m): Message => ({ ...m, writer: 'built-in' }));
    if (!this.llm) return Promise.resolve(builtIn);
    const llm = this.llm;
    return Promise.all(
      rows.map((values, i) =>
        this.limiter.schedule(async () => {
          try {
            return (await modelMessage(llm, brief, values, workspaceId, signal, trace)) ?? builtIn[i]!;
          } catch (err) {
            if (err instanceof LlmError) return builtIn[i]!;
            throw err;
          }
        }),
      ),
    );
  }
}
