/**
 * The built-in writer read as a prospect would read it: a greeting by first name, the offering
 * inside a whole sentence, the company, the sender, a question; no sentence starting in lower
 * case or run into the next; the same rows giving the same messages, different rows differing by
 * more than the name; any cell (empty, huge, emoji, markup) still giving a well-formed message
 * within the limits. A few golden messages pin the tone.
 */
import { describe, expect, it } from 'vitest';
import { builtInMessage, builtInMessages, type Brief, type Written } from '../../../server/outreach/built-in-writer.ts';
import { languageNote, languageOf } from '../../../server/outreach/writer-language.ts';

const OFFERINGS = {
  pt: 'um sistema de gestão de pedidos para padarias',
  en: 'an order management system for bakeries',
  es: 'un sistema de gestión de pedidos para panaderías',
};

const ROWS: Array<Record<string, string>> = [
  { Nome: 'Ana Souza', Empresa: 'PADARIA PÃO QUENTE LTDA', Cargo: 'Sócia', Cidade: 'Recife' },
  { Nome: 'Bruno Lima', Empresa: 'Padaria Central', Cidade: 'Curitiba' },
  { Name: 'Carla Mendes', Company: 'Initech', Title: 'CTO' },
  { 'First name': 'Diego', Setor: 'Padarias' },
  { Nombre: 'Elena', Empresa: 'Panadería Sol' },
];

/** Sentences of a text: split after . ! ? … and at line breaks. */
const sentences = (text: string) =>
  text
    .split(/\n+|(?<=[.!?…])\s+/)
    .map((s) => s.trim())
    .filter(Boolean);

/** The rules every message must keep, whatever the row. */
function expectWellFormed(m: Written, offering?: string): void {
  for (const text of [m.connectionNote, m.emailSubject, m.emailBody]) {
    // No sentence starts in lower case (an opening ¿ or ¡ is Spanish punctuation, not a start).
    for (const s of sentences(text)) expect(s.replace(/^[¿¡]/, ''), `in ${JSON.stringify(text)}`).toMatch(/^[\p{Lu}\p{N}"'(]/u);
    // No two sentences run together ("padarias.Sou"), no full stop before a lower-case word.
    expect(text).not.toMatch(/[.!?][\p{L}]/u);
    expect(text).not.toMatch(/[.!?]\s+\p{Ll}/u);
    // Plain, whole text: no markup, no lone half of an emoji, no doubled spaces or punctuation.
    expect(text).not.toMatch(/[<>]|\uFFFD|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    expect(text).not.toMatch(/ {2}|\.\.(?!\.)|,,|\s[.,!?]/);
    expect(text.trim()).toBe(text);
    expect(text).not.toBe('');
  }
  expect(m.connectionNote.length).toBeLessThanOrEqual(300);
  expect(m.emailSubject.length).toBeLessThanOrEqual(300);
  expect(m.emailBody.length).toBeLessThanOrEqual(5000);
  // A question that invites a reply, in the body and the note.
  expect(m.emailBody).toMatch(/\?/);
  expect(m.connectionNote).toMatch(/\?$/);
  if (offering) {
    // The offering sits inside a sentence: a word before it, never a full stop.
    const at = m.emailBody.indexOf(offering);
    expect(at, m.emailBody).toBeGreaterThan(0);
    expect(m.emailBody.slice(0, at)).toMatch(/\p{L} $/u);
  }
}

describe('the built-in writer', () => {
  for (const [language, lang] of [['pt-BR', 'pt'], ['English', 'en'], ['español', 'es']] as const) {
    it(`writes whole, personal messages in ${language}`, () => {
      const brief: Brief = { offering: OFFERINGS[lang], senderName: 'Marina Alves', language };
      const messages = builtInMessages(brief, ROWS);
      messages.forEach((m, i) => {
        expectWellFormed(m, OFFERINGS[lang]);
        const first = Object.entries(ROWS[i]!).find(([k]) => /^(nome|name|first name|nombre)$/i.test(k))![1].split(' ')[0]!;
        expect(m.emailBody.split('\n')[0]).toContain(first); // greeting by first name
        expect(m.connectionNote).toContain(first);
        expect(m.emailBody).toContain('Marina Alves');
        expect(m.connectionNote).toContain('Marina Alves');
      });
      // The company when the row names one, as a person writes it (no registry capitals or legal form).
      expect(messages[0]!.emailBody).toContain('Padaria Pão Quente');
      expect(messages[0]!.emailBody).not.toMatch(/LTDA|PADARIA/);
      expect(messages[1]!.emailBody).toContain('Padaria Central');
      expect(messages[2]!.emailBody).toContain('Initech');
      expect(messages[2]!.emailBody).toContain('CTO');
    });
  }

  it('writes Portuguese by default, and for a language it does not know, saying so', () => {
    const pt = builtInMessage({ offering: OFFERINGS.pt, senderName: 'Marina' }, ROWS[0]!);
    expect(pt.emailBody).toMatch(/^Ol|^Oi/);
    expect(builtInMessage({ offering: OFFERINGS.pt, senderName: 'Marina', language: 'klingon' }, ROWS[0]!)).toEqual(pt);
    expect(languageOf('klingon')).toBe('pt');
    expect(languageNote('klingon')).toMatch(/"klingon".*Portuguese/);
    for (const known of [undefined, '', 'pt', 'Português', 'en-US', 'inglés', 'Spanish', 'castellano']) expect(languageNote(known)).toBeUndefined();
    expect([languageOf('en-US'), languageOf('inglês'), languageOf('Español'), languageOf('pt-BR')]).toEqual(['en', 'en', 'es', 'pt']);
  });

  it('gives the same rows the same messages, and rows that differ only by name messages that differ by more', () => {
    const brief: Brief = { offering: OFFERINGS.pt, senderName: 'Marina' };
    const names = ['Ana', 'Bruno', 'Carla', 'Diego', 'Elena', 'Fábio', 'Gabi', 'Hugo', 'Iara', 'João', 'Kátia', 'Luís', 'Mara', 'Nuno', 'Olga', 'Paulo', 'Rita', 'Sara', 'Tiago', 'Vera', 'Wagner', 'Xavier', 'Yara', 'Zeca', 'Ângela'];
    const rows = names.map((Nome) => ({ Nome, Empresa: 'Padaria Central' }));
    const messages = builtInMessages(brief, rows);
    expect(builtInMessages(brief, rows)).toEqual(messages);
    const skeletons = messages.map((m, i) => m.emailBody.split(names[i]!).join('#'));
    expect(new Set(skeletons).size).toBe(rows.length);
    messages.forEach((m) => expectWellFormed(m, OFFERINGS.pt));
  });

  it('turns empty, huge, emoji-laden and markup-laden values into well-formed messages within the limits', () => {
    const huge = 'palavra '.repeat(700);
    const cases: Array<[Brief, Record<string, string>]> = [
      [{ offering: OFFERINGS.pt }, {}],
      [{ offering: '   ', senderName: '  ', language: '' }, { Nome: '', Empresa: '   ' }],
      [{ offering: '<b></b>', senderName: '<i>Marina</i>' }, { Nome: '<script>alert(1)</script>' }],
      [{ offering: huge.slice(0, 2000), senderName: 'M'.repeat(120) }, { Nome: huge, Empresa: huge, Cargo: huge, Cidade: huge, Setor: huge }],
      [{ offering: '🚀 '.repeat(600), senderName: '👩‍👩‍👧‍👦'.repeat(10) }, { Nome: '👩‍👩‍👧‍👦 Ana', Empresa: '👩‍👩‍👧‍👦'.repeat(2000) }],
      [{ offering: 'um <b>sistema</b> &amp; suporte\u0000\u0007 para padarias', senderName: 'Marina' }, { Nome: '<b>Dr. JOÃO</b>\nSILVA', Empresa: 'ACME &amp; FILHOS S/A' }],
      [{ offering: 'Ajudamos padarias a reduzir o desperdício. atendemos 200 lojas', tone: 'formal' }, { Nome: 'ana souza' }],
    ];
    for (const [brief, row] of cases) {
      for (const language of ['pt', 'en', 'es']) {
        const m = builtInMessage({ ...brief, language }, row);
        expectWellFormed(m);
      }
    }
    const tidy = builtInMessage({ ...cases[5]![0], language: 'pt' }, cases[5]![1]);
    expect(tidy.emailBody).toContain('um sistema & suporte para padarias');
    expect(tidy.emailBody).toContain('João');
    expect(tidy.emailBody).toContain('Acme & Filhos');
  });

  it('reads an offering written as sentences: the first inside the message, the others after it, each whole', () => {
    const m = builtInMessage({ offering: 'Uma plataforma que automatiza a agenda de clínicas. Reduz faltas em 30%', senderName: 'Marina' }, ROWS[0]!);
    expect(m.emailBody).toMatch(/\p{L} uma plataforma que automatiza a agenda de clínicas\. Reduz faltas em 30%\./u);
    const clause = builtInMessage({ offering: 'Ajudamos padarias a reduzir o desperdício. atendemos 200 lojas', senderName: 'Marina' }, ROWS[0]!);
    expect(clause.emailBody).toMatch(/Marina\. Ajudamos padarias a reduzir o desperdício\. Atendemos 200 lojas\./);
  });

  it('golden messages, reviewed for tone', () => {
    const brief = (language: string): Brief => ({ offering: OFFERINGS[languageOf(language)], senderName: 'Marina Alves', language });
    expect(builtInMessage(brief('pt-BR'), ROWS[0]!)).toEqual(GOLDEN.pt);
    expect(builtInMessage(brief('en'), ROWS[2]!)).toEqual(GOLDEN.en);
    expect(builtInMessage(brief('es'), ROWS[4]!)).toEqual(GOLDEN.es);
    expect(builtInMessage({ ...brief('pt'), tone: 'formal' }, ROWS[3]!)).toEqual(GOLDEN.ptFormal);
  });
});

const GOLDEN: Record<'pt' | 'en' | 'es' | 'ptFormal', Written> = {
  pt: {
    connectionNote: "Olá, Ana! Sou Marina Alves e gostaria de apresentar um sistema de gestão de pedidos para padarias. Vamos nos conectar?",
    emailSubject: "Ana, uma pergunta sobre a Padaria Pão Quente",
    emailBody: [
      "Olá, Ana, como vai?",
      "",
      "Sou Marina Alves e gostaria de apresentar um sistema de gestão de pedidos para padarias.",
      "",
      "Pensei em você por ser sócia da Padaria Pão Quente. Posso mostrar como funciona em uma conversa rápida?",
      "",
      "Um abraço,",
      "Marina Alves",
    ].join('\n'),
  },
  en: {
    connectionNote: "Hi Carla! This is Marina Alves; I'd like to introduce an order management system for bakeries. May I add you to my network?",
    emailSubject: "For Initech: an order management system for bakeries",
    emailBody: [
      "Hi Carla,",
      "",
      "This is Marina Alves; I'd like to introduce an order management system for bakeries.",
      "",
      "As CTO at Initech, you may be the right person to look at this. Is this a priority for Initech right now?",
      "",
      "Best regards,",
      "Marina Alves",
    ].join('\n'),
  },
  es: {
    connectionNote: "¡Hola, Elena! Me llamo Marina Alves y trabajo con un sistema de gestión de pedidos para panaderías. ¿Conectamos?",
    emailSubject: "Para Panadería Sol: un sistema de gestión de pedidos para panaderías",
    emailBody: [
      "Hola, Elena, ¿cómo está?",
      "",
      "Me llamo Marina Alves y trabajo con un sistema de gestión de pedidos para panaderías.",
      "",
      "Creo que puede ser útil para Panadería Sol. ¿Le parece si lo conversamos en una llamada corta esta semana?",
      "",
      "Un saludo,",
      "Marina Alves",
    ].join('\n'),
  },
  ptFormal: {
    connectionNote: "Olá, Diego! Aqui é Marina Alves e escrevo para apresentar um sistema de gestão de pedidos para padarias. Vamos nos conectar?",
    emailSubject: "Uma ideia para a sua equipe",
    emailBody: [
      "Olá, Diego, como vai?",
      "",
      "Aqui é Marina Alves e escrevo para apresentar um sistema de gestão de pedidos para padarias.",
      "",
      "Tenho conversado com empresas de padarias e acredito que isso pode ser útil para você. Faz sentido conversarmos 15 minutos na próxima semana?",
      "",
      "Atenciosamente,",
      "Marina Alves",
    ].join('\n'),
  },
};
