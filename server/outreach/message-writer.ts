/**
 * One personalized message per row: a connection note (≤ 300), an email subject (≤ 300) and body
 * (≤ 5000), from the campaign's offering, sender, tone, context and language and the row's cells.
 * With a model configured, the model writes them (JSON checked against the limits, one retry);
 * otherwise, or when the model fails, the built-in writer composes them from the recognised
 * columns in English, Portuguese or Spanish. Rows are written concurrently, 25 at most.
 */
import Bottleneck from 'bottleneck';
import { ProspectUpdateBody } from '../../shared/schemas/prospects.ts';
import type { Prospect } from '../../shared/types.ts';
import { LlmError, type Llm } from '../ai/llm.ts';
import { framing } from '../ai/untrusted-data.ts';
import { headerMeaning, type HeaderMeaning } from '../../shared/column-headers.ts';
import { foldText } from '../../shared/fold-text.ts';
import type { TraceContext } from '../trace-context.ts';

/** The message limits of the prospect record, from its schema (300, 300, 5000). */
const messageField = (name: 'connectionNote' | 'emailSubject' | 'emailBody') => ProspectUpdateBody.properties[name].maxLength!;
const LIMITS = { connectionNote: messageField('connectionNote'), emailSubject: messageField('emailSubject'), emailBody: messageField('emailBody') };

export interface Message {
  connectionNote: string;
  emailSubject: string;
  emailBody: string;
  /** Who wrote it: the model, or the built-in writer. */
  writer: Prospect['writer'];
}

export interface Brief {
  offering: string;
  senderName?: string | undefined;
  tone?: string | undefined;
  businessContext?: string | undefined;
  language?: string | undefined;
}

type Lang = 'en' | 'pt' | 'es';

/** `pt-BR`, `Portuguese`, `português` → pt; `es`, `Spanish`, `español` → es; otherwise en. */
export function languageOf(language: string | undefined): Lang {
  const l = foldText(language ?? '');
  if (/^(pt|portugu)/.test(l) || l.includes('brasil')) return 'pt';
  if (/^(es|spanish|espan|castellano)/.test(l)) return 'es';
  return 'en';
}

type Recognised = 'name' | 'firstName' | 'company' | 'title' | 'city' | 'industry';

/** What the writer reads from a row, by the shared header list (shared/column-headers.ts). */
const READS: Partial<Record<HeaderMeaning, Recognised>> = {
  name: 'name',
  firstName: 'firstName',
  company: 'company',
  title: 'title',
  location: 'city',
  industry: 'industry',
};

/** The recognised cells of a row, by meaning; the first column of a meaning wins. */
function recognise(values: Record<string, string>): Partial<Record<Recognised, string>> {
  const found: Partial<Record<Recognised, string>> = {};
  for (const [label, value] of Object.entries(values)) {
    const meaning = headerMeaning(label);
    const read = meaning && READS[meaning];
    if (read && value.trim() && !found[read]) found[read] = value.trim();
  }
  if (!found.firstName && found.name) found.firstName = found.name.split(/\s+/)[0];
  return found;
}

const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1).replace(/\s+\S*$/, '')}…`);
/** The offering's first sentence, short enough for a subject or a note. */
const gist = (offering: string, max: number) => clip(offering.split(/(?<=[.!?])\s/)[0]!.replace(/[.!?]$/, ''), max);
const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

const WORDS = {
  en: {
    hi: (n?: string) => (n ? `Hi ${n}` : 'Hi'),
    hey: (n?: string) => (n ? `Hi ${n}!` : 'Hi!'),
    dear: (n?: string) => (n ? `Dear ${n}` : 'Hello'),
    note: (who: string, what: string) => `I help ${who} with ${what}. I would be glad to connect.`,
    teams: (c?: string, i?: string) => (c ? `teams like ${c}` : i ? `${i} companies` : 'teams like yours'),
    intro: (s?: string) => (s ? `I am ${s}` : 'I am reaching out'),
    because: (t?: string, c?: string, city?: string) =>
      `${t && c ? `As ${t} at ${c}, you` : c ? `At ${c}, you` : 'You'} may find this useful${city ? ` in ${city}` : ''}.`,
    ask: 'Would you be open to a short call next week to see if it fits?',
    bye: 'Best regards,',
    subject: (what: string, c?: string) => (c ? `${c}: ${lowerFirst(what)}` : what),
  },
  pt: {
    hi: (n?: string) => (n ? `Olá, ${n}` : 'Olá'),
    hey: (n?: string) => (n ? `Olá, ${n}!` : 'Olá!'),
    dear: (n?: string) => (n ? `Prezado(a) ${n}` : 'Prezado(a)'),
    note: (who: string, what: string) => `Ajudo ${who} com ${what}. Seria um prazer me conectar.`,
    teams: (c?: string, i?: string) => (c ? `empresas como a ${c}` : i ? `empresas de ${i}` : 'empresas como a sua'),
    intro: (s?: string) => (s ? `Sou ${s}` : 'Entro em contato'),
    because: (t?: string, c?: string, city?: string) =>
      `${t && c ? `Como ${t} na ${c}, você` : c ? `Na ${c}, você` : 'Você'} pode achar isso útil${city ? ` em ${city}` : ''}.`,
    ask: 'Podemos conversar 15 minutos na próxima semana para ver se faz sentido?',
    bye: 'Um abraço,',
    subject: (what: string, c?: string) => (c ? `${c}: ${lowerFirst(what)}` : what),
  },
  es: {
    hi: (n?: string) => (n ? `Hola, ${n}` : 'Hola'),
    hey: (n?: string) => (n ? `¡Hola, ${n}!` : '¡Hola!'),
    dear: (n?: string) => (n ? `Estimado/a ${n}` : 'Estimado/a'),
    note: (who: string, what: string) => `Ayudo a ${who} con ${what}. Me encantaría conectar.`,
    teams: (c?: string, i?: string) => (c ? `empresas como ${c}` : i ? `empresas de ${i}` : 'empresas como la suya'),
    intro: (s?: string) => (s ? `Soy ${s}` : 'Le escribo'),
    because: (t?: string, c?: string, city?: string) =>
      `${t && c ? `Como ${t} en ${c}, esto` : c ? `En ${c}, esto` : 'Esto'} le puede ser útil${city ? ` en ${city}` : ''}.`,
    ask: '¿Tendría 15 minutos la próxima semana para ver si encaja?',
    bye: 'Saludos cordiales,',
    subject: (what: string, c?: string) => (c ? `${c}: ${lowerFirst(what)}` : what),
  },
};

/** The built-in writer: always within the limits, never fails. */
export function builtInMessage(brief: Brief, values: Record<string, string>): Message {
  const w = WORDS[languageOf(brief.language)];
  const row = recognise(values);
  const formal = /formal|formel|serio|sério|respeit/i.test(brief.tone ?? '');
  const greet = formal ? w.dear(row.name ?? row.firstName) : w.hi(row.firstName);
  const what = lowerFirst(gist(brief.offering, 120));
  const who = w.teams(row.company, row.industry);
  const sign = brief.senderName?.trim();
  const body = [
    `${greet},`,
    '',
    `${w.intro(sign)}. ${brief.offering.trim()}`,
    '',
    w.because(row.title, row.company, row.city),
    '',
    w.ask,
    '',
    w.bye,
    ...(sign ? [sign] : []),
  ].join('\n');
  return {
    connectionNote: clip(`${w.hey(row.firstName)} ${w.note(who, what)}${sign ? ` — ${sign}` : ''}`, LIMITS.connectionNote),
    emailSubject: clip(w.subject(gist(brief.offering, 90), row.company), LIMITS.emailSubject),
    emailBody: clip(body, LIMITS.emailBody),
    writer: 'built-in',
  };
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
        `(at most ${LIMITS.emailBody}). Write in ${brief.language?.trim() || 'English'}, in the requested tone, signed by the sender. ` +
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
    return Promise.all(
      rows.map((values) =>
        this.limiter.schedule(async () => {
          if (!this.llm) return builtInMessage(brief, values);
          try {
            return (await modelMessage(this.llm, brief, values, workspaceId, signal, trace)) ?? builtInMessage(brief, values);
          } catch (err) {
            if (err instanceof LlmError) return builtInMessage(brief, values);
            throw err;
          }
        }),
      ),
    );
  }
}
