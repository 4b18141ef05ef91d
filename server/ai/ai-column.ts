/**
 * A short value for one row from an instruction ("industry in two words"). The row is data (see
 * untrusted-data.ts); the answer is one line of at most 500 characters, without quotes or
 * preamble. The same instruction on the same row within a workspace is answered from a cache
 * for 24 hours, free; identical requests in flight at once share one model call.
 */
import { createHash } from 'node:crypto';
import type { AiColumnResult } from '../../shared/types.ts';
import type { IndexDeclaration, Store } from '../store/port.ts';
import { LlmError, requireLlm, type Llm } from './llm.ts';
import { framing } from './untrusted-data.ts';
import type { TraceContext } from '../lib/trace-context.ts';

export const MAX_VALUE_CHARS = 500;
const CACHE_MS = 24 * 60 * 60 * 1000;

interface CacheDoc {
  _id: string;
  workspaceId: string;
  value: string;
  createdAt: Date;
}

/** Cached values go away on their own a day after they were made. */
export const aiCacheIndexes: IndexDeclaration[] = [{ collection: 'ai_cache', keys: { createdAt: 1 }, options: { expireAfterSeconds: CACHE_MS / 1000 } }];

/** The AI column's answer, before the handler says what it charged. */
export type ColumnValue = Omit<AiColumnResult, 'creditsCharged'>;

/** Phrases models put before the value they were asked for. */
const PREAMBLE = /^(sure|certainly|of course|okay|ok|claro|certo|por supuesto)\b[^:\n]*[:\n]\s*|^(here is|here's|the value is|answer|value|resposta|valor|respuesta)\s*[:\-]\s*/i;

/** One clean line: no preamble, no wrapping quotes or code marks, at most 500 characters. */
export function cleanValue(raw: string): string {
  let value = raw.trim();
  for (let i = 0; i < 3; i++) value = value.replace(PREAMBLE, '').trim();
  value = value.replace(/\s*\n+\s*/g, ' ').replace(/\s{2,}/g, ' ');
  for (let i = 0; i < 3; i++) {
    const unwrapped = value.replace(/^(["'`“”‘’«»*_]+)([\s\S]*?)(["'`“”‘’«»*_]+)$/, '$2').trim();
    if (unwrapped === value) break;
    value = unwrapped;
  }
  if (value.length > MAX_VALUE_CHARS) {
    const cut = value.slice(0, MAX_VALUE_CHARS);
    const space = cut.lastIndexOf(' ');
    value = (space > MAX_VALUE_CHARS * 0.6 ? cut.slice(0, space) : cut).trim();
  }
  return value;
}

/** The model's answer: `{"value": …}` when it kept to JSON, else its text. */
function valueOf(text: string): string {
  try {
    const parsed = JSON.parse(text) as { value?: unknown };
    if (parsed && typeof parsed === 'object' && 'value' in parsed) return String(parsed.value ?? '');
  } catch {
    // a model without JSON mode answers in plain text
  }
  return text;
}

export class AiColumns {
  private readonly cache;
  private readonly inFlight = new Map<string, Promise<string>>();

  constructor(
    store: Store,
    private readonly llm: Llm | null,
  ) {
    this.cache = store.collection<CacheDoc>('ai_cache');
  }

  static key(workspaceId: string, instruction: string, context: Record<string, string>): string {
    const row = Object.keys(context)
      .sort()
      .map((k) => [k, context[k]]);
    return createHash('sha256').update(JSON.stringify([workspaceId, instruction.trim(), row])).digest('hex');
  }

  async value(workspaceId: string, instruction: string, context: Record<string, string>, signal: AbortSignal, trace?: TraceContext): Promise<ColumnValue> {
    const llm = requireLlm(this.llm);
    const key = AiColumns.key(workspaceId, instruction, context);
    const hit = await this.cache.findOne({ _id: key });
    if (hit && Date.now() - hit.createdAt.getTime() < CACHE_MS) return { value: hit.value, cached: true };

    const running = this.inFlight.get(key);
    if (running) return { value: await running, cached: true };
    const work = this.generate(llm, workspaceId, instruction, context, signal, trace).then(async (value) => {
      await this.cache.updateOne({ _id: key }, { $set: { workspaceId, value, createdAt: new Date() } }, { upsert: true });
      return value;
    });
    this.inFlight.set(key, work);
    try {
      return { value: await work, cached: false };
    } finally {
      this.inFlight.delete(key);
    }
  }

  private async generate(llm: Llm, workspaceId: string, instruction: string, context: Record<string, string>, signal: AbortSignal, trace: TraceContext | undefined): Promise<string> {
    const frame = framing();
    const messages = [
      {
        role: 'system' as const,
        content:
          'You fill one spreadsheet cell. Follow the instruction for the row given as data, and answer with a JSON object ' +
          `{"value": "..."}: a short value on one line, at most ${MAX_VALUE_CHARS} characters, with no explanation. ` +
          'If the data does not allow an answer, use an empty string. ' +
          frame.rules,
      },
      { role: 'user' as const, content: `Instruction: ${instruction.trim()}\n\nRow:\n${frame.wrap('row', context)}` },
    ];
    for (let attempt = 0; attempt < 2; attempt++) {
      const answer = await llm.chat({ messages, maxTokens: 300, json: true, workspaceId, purpose: 'ai_column', signal, trace });
      if (frame.leaks(answer.text)) continue;
      const value = cleanValue(valueOf(answer.text));
      if (value !== '' || /"value"\s*:\s*""/.test(answer.text)) return value;
    }
    throw new LlmError('The model did not give a usable value.', 'ai_failed');
  }
}
