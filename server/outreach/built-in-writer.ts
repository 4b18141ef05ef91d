/**
 * The built-in writer: the messages a careful person would send when no model is configured (or
 * the model fails). A greeting by first name, the offering inside a whole sentence, the company
 * when the row names one, the sender's name and a question inviting a reply, in the campaign's
 * language (writer-language.ts). Cell values are tidied first (markup, control
 * characters and spacing removed, registry capitals softened, lengths capped) so that any row
 * gives a well-formed message within the field limits. The same rows give the same messages:
 * the phrasing is picked by a hash of the row, and a row whose message would differ from another
 * of the same batch only by the name takes the next phrasing.
 */
import { ProspectUpdateBody } from '../../shared/schemas/prospects.ts';
import { headerMeaning, type HeaderMeaning } from '../../shared/column-headers.ts';
import { capital, PHRASES, type Facts, type Phrases } from './built-in-phrases.ts';
import { languageOf } from './writer-language.ts';

/** The message limits of the prospect record, from its schema (300, 300, 5000). */
const messageField = (name: 'connectionNote' | 'emailSubject' | 'emailBody') => ProspectUpdateBody.properties[name].maxLength!;
export const LIMITS = { connectionNote: messageField('connectionNote'), emailSubject: messageField('emailSubject'), emailBody: messageField('emailBody') };

export interface Brief {
  offering: string;
  senderName?: string | undefined;
  tone?: string | undefined;
  businessContext?: string | undefined;
  language?: string | undefined;
}

export interface Written {
  connectionNote: string;
  emailSubject: string;
  emailBody: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };

/** Plain text of a cell or field: markup and control characters out, spacing collapsed. */
export function tidy(value: string | undefined): string {
  return (value ?? '')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(amp|lt|gt|quot|apos|nbsp|#39);/g, (_, name: string) => ENTITIES[name]!)
    .replace(/[<>]/g, ' ')
    .replace(/[\p{Cc}\p{Cf}\u2028\u2029]/gu, (c) => (c === '\u200d' ? c : ' ')) // the joiner holds emoji together
    .replace(/\s+/g, ' ')
    .trim();
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * At most `max` characters, cut after a whole word (never inside an emoji), `…` marking the cut;
 * `mark: false` for a value inside a sentence, where an ellipsis would read as its end.
 */
export function clip(text: string, max: number, mark = true): string {
  if (text.length <= max) return text;
  let kept = '';
  for (const { segment } of graphemes.segment(text)) {
    if (kept.length + segment.length > max - 1) break;
    kept += segment;
  }
  const atWord = kept.replace(/\s+\S*$/, '');
  const cut = (atWord.length > max / 2 ? atWord : kept).replace(/[\s,;:.!?…]+$/, '');
  return mark ? `${cut}…` : cut;
}

/** "PADARIA PÃO QUENTE" → "Padaria Pão Quente"; text with lower case, or short capitals (CTO), is left as written. */
function softenCapitals(text: string): string {
  if (/\p{Ll}/u.test(text) || !/\p{Lu}{4}/u.test(text)) return text;
  return text.toLowerCase().replace(/(^|[\s(/-])(\p{L})(\p{L}*)/gu, (_, pre: string, first: string, rest: string) =>
    ['de', 'da', 'do', 'das', 'dos', 'e', 'y', 'del', 'la', 'of', 'and'].includes(first + rest) && pre !== '' ? pre + first + rest : pre + first.toUpperCase() + rest);
}

const LEGAL_FORM = /[\s,-]+(ltda|me|epp|eireli|s\s?\/?\s?a|sa|inc|llc|ltd|s\.?l|sociedade anonima)\.?$/i;
const HONORIFIC = /^(dr|dra|sr|sra|srta|mr|mrs|ms|miss|prof|profa|don|dona|dña)\.?$/i;
const LIMITS_OF_FACTS = { first: 40, company: 80, title: 80, city: 60, industry: 60 };

/** What the writer reads from a row, by the shared header list (shared/column-headers.ts). */
const READS: Partial<Record<HeaderMeaning, keyof Facts | 'name'>> = {
  name: 'name',
  firstName: 'first',
  company: 'company',
  title: 'title',
  location: 'city',
  industry: 'industry',
};

/** The row's recognised cells, tidied; the first column of a meaning wins. */
export function factsOf(values: Record<string, string>): Facts & { name?: string } {
  const raw: Partial<Record<keyof Facts | 'name', string>> = {};
  for (const [label, value] of Object.entries(values)) {
    const meaning = headerMeaning(label);
    const read = meaning && READS[meaning];
    const text = typeof value === 'string' ? tidy(value) : '';
    if (read && /[\p{L}\p{N}]/u.test(text) && !raw[read]) raw[read] = text;
  }
  const facts: Facts & { name?: string } = {};
  const firstWord = (raw.first ?? raw.name ?? '').split(' ').find((w) => /\p{L}/u.test(w) && !HONORIFIC.test(w));
  if (firstWord) facts.first = clip(softenCapitals(firstWord).replace(/^\p{Ll}/u, (c) => c.toUpperCase()), LIMITS_OF_FACTS.first, false);
  if (raw.name) facts.name = raw.name;
  let company = raw.company;
  while (company && LEGAL_FORM.test(company)) company = company.replace(LEGAL_FORM, '');
  if (company) facts.company = clip(softenCapitals(company), LIMITS_OF_FACTS.company, false);
  // A title reads in lower case inside a sentence ("diretora comercial"); acronyms (CTO) stay.
  if (raw.title) facts.title = clip(softenCapitals(raw.title).replace(/(?<!\S)\p{Lu}(?=\p{Ll}+(?!\S))/gu, (c) => c.toLowerCase()), LIMITS_OF_FACTS.title, false);
  if (raw.city) facts.city = clip(softenCapitals(raw.city), LIMITS_OF_FACTS.city, false);
  if (raw.industry) facts.industry = clip(raw.industry.toLowerCase(), LIMITS_OF_FACTS.industry, false);
  return facts;
}

/** Words that open a sentence of its own ("Ajudamos padarias…", "We help…") rather than a noun phrase. */
const CLAUSE_START = /^(we|i|our|my|nos|nós|eu|nosso|nossa|somos|nosotros|yo|nuestro|nuestra)$|^\p{L}+mos$/u;

interface Offering {
  /** The first sentence as a noun phrase to place inside a sentence, or null when it is a sentence itself. */
  phrase: string | null;
  /** The first sentence, whole (capital start, final punctuation). */
  sentence: string;
  /** The sentences after the first, each whole. */
  rest: string[];
}

const whole = (sentence: string) => capital(/[.!?…]$/.test(sentence) ? sentence : `${sentence}.`);

function readOffering(offering: string, w: Phrases): Offering {
  const text = tidy(offering);
  const sentences = (/[\p{L}\p{N}]/u.test(text) ? text : w.something).split(/(?<=[.!?])\s+/).filter((s) => /[\p{L}\p{N}]/u.test(s));
  const first = sentences[0]!;
  const firstWord = first.split(' ')[0]!;
  const isClause = CLAUSE_START.test(firstWord.toLowerCase()) && !/^\p{Lu}{2}/u.test(firstWord);
  // A capitalised first word ("Uma plataforma…") reads in lower case inside a sentence; an acronym or a brand in capitals stays.
  const phrase = first.replace(/[.!?]+$/, '').replace(/^(\p{Lu})(?=\p{Ll}|\s|$)/u, (c) => c.toLowerCase());
  return { phrase: isClause ? null : phrase, sentence: whole(first), rest: sentences.slice(1).map(whole) };
}

/** A stable 32-bit hash: FNV-1a, then MurmurHash3's finaliser so that its low bits (picked by `%`) mix too. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

const pick = <T>(list: T[], seed: number, slot: number): T => list[hash(`${seed}:${slot}`) % list.length]!;

function compose(brief: Brief, facts: Facts, seed: number): Written {
  const w = PHRASES[languageOf(brief.language)];
  const formal = /formal|formel|serio|sério|respeit/i.test(brief.tone ?? '');
  const signed = clip(tidy(brief.senderName), 120, false);
  const sender = /\p{L}/u.test(signed) ? signed : undefined;
  const offering = readOffering(brief.offering, w);
  const x = facts;

  const offerWith = (phrase: string) => (sender ? pick(w.offer.signed, seed, 1)(sender, phrase) : pick(w.offer.unsigned, seed, 1)(phrase));
  const opening = (phrase: string | null, sentence: string) =>
    phrase !== null ? offerWith(phrase) : [...(sender ? [pick(w.self, seed, 1)(sender)] : []), sentence].join(' ');

  const greeting = x.first ? pick(formal ? w.greet.formal : w.greet.casual, seed, 0)(x.first) : w.greet.anonymous;
  const signOff = formal ? w.signOff.formal : w.signOff.casual;
  const body = [
    greeting,
    '',
    [opening(offering.phrase, offering.sentence), ...offering.rest].join(' '),
    '',
    `${pick(w.why(x), seed, 2)} ${pick(w.ask(x), seed, 3)}`,
    '',
    ...(sender ? [signOff, sender] : [signOff.replace(/,$/, '.')]),
  ].join('\n');

  // The note keeps the first sentence of the offering, shortened to fit when it must.
  const connect = formal ? w.connect[0]! : pick(w.connect, seed, 4);
  const note = (phrase: string | null, sentence: string) => `${w.hello(x.first)} ${opening(phrase, sentence)} ${connect}`;
  let connectionNote = note(offering.phrase, offering.sentence);
  if (connectionNote.length > LIMITS.connectionNote) {
    const room = LIMITS.connectionNote - note('', '').length;
    connectionNote = offering.phrase !== null ? note(clip(offering.phrase, room), '') : note(null, clip(offering.sentence, room));
    connectionNote = connectionNote.replace('….', '…');
  }

  const gist = offering.phrase ?? offering.sentence.replace(/[.!?]$/, '').replace(/^\p{Lu}(?=\p{Ll})/u, (c) => c.toLowerCase());
  const emailSubject = pick(w.subject(x, clip(gist, 150)), seed, 5);
  return {
    connectionNote: clip(connectionNote, LIMITS.connectionNote),
    emailSubject: clip(emailSubject, LIMITS.emailSubject),
    emailBody: clip(body, LIMITS.emailBody),
  };
}

/** One row's message, as `builtInMessages` writes it for a batch of that row alone. */
export const builtInMessage = (brief: Brief, values: Record<string, string>): Written => builtInMessages(brief, [values])[0]!;

/** A message per row, in order; rows of the batch that differ only by name get different phrasings. */
export function builtInMessages(brief: Brief, rows: Array<Record<string, string>>): Written[] {
  const seen = new Set<string>();
  return rows.map((values) => {
    const facts = factsOf(values);
    const seed = hash(JSON.stringify([facts.name ?? facts.first ?? '', facts.company, facts.title, facts.city, facts.industry]));
    // Tried in a fixed order, so the same batch always gives the same messages.
    let message = compose(brief, facts, seed);
    for (let k = 1; k < 50 && seen.has(skeleton(message.emailBody, facts)); k++) message = compose(brief, facts, seed + k);
    seen.add(skeleton(message.emailBody, facts));
    return message;
  });
}

/** The message with the person's name taken out: what two rows must not share. */
const skeleton = (body: string, facts: Facts) => (facts.first ? body.split(facts.first).join('#') : body);
