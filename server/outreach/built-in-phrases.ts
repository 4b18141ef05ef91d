/**
 * The built-in writer's sentences, per language. Each slot holds several ways of saying the same
 * thing, so that rows differ by more than the name; every sentence is whole (capital start, its
 * own punctuation) and takes the offering (`o`, a noun phrase such as "um sistema de gestão de
 * pedidos para padarias") inside it, never after a full stop.
 */
import type { WriterLanguage } from './writer-language.ts';

/** What a row tells the writer, tidied; absent when the row does not say. */
export interface Facts {
  first?: string;
  company?: string;
  title?: string;
  city?: string;
  industry?: string;
}

export interface Phrases {
  /** The email's first line. */
  greet: { casual: Array<(f: string) => string>; formal: Array<(f: string) => string>; anonymous: string };
  /** The note's opening. */
  hello: (f?: string) => string;
  /** The sender and the offering in one sentence (`o` a noun phrase). */
  offer: { signed: Array<(s: string, o: string) => string>; unsigned: Array<(o: string) => string> };
  /** The sender before an offering that is a sentence of its own. */
  self: Array<(s: string) => string>;
  /** Why this person or company. */
  why: (x: Facts) => string[];
  /** The question that invites a reply. */
  ask: (x: Facts) => string[];
  /** The note's closing question; a formal tone takes the first. */
  connect: string[];
  signOff: { casual: string; formal: string };
  /** What is offered when the offering says nothing readable (only markup, say). */
  something: string;
  subject: (x: Facts, gist: string) => string[];
}

const PT: Phrases = {
  greet: {
    casual: [(f) => `Olá, ${f}!`, (f) => `Oi, ${f}, tudo bem?`, (f) => `Olá, ${f}, como vai?`],
    formal: [(f) => `Prezado(a) ${f},`, (f) => `Olá, ${f}, como vai?`],
    anonymous: 'Olá, tudo bem?',
  },
  hello: (f) => (f ? `Olá, ${f}!` : 'Olá!'),
  offer: {
    signed: [
      (s, o) => `Meu nome é ${s} e trabalho com ${o}.`,
      (s, o) => `Aqui é ${s} e escrevo para apresentar ${o}.`,
      (s, o) => `Sou ${s} e gostaria de apresentar ${o}.`,
    ],
    unsigned: [(o) => `Escrevo para apresentar ${o}.`, (o) => `Gostaria de apresentar ${o}.`, (o) => `Trabalho com ${o}.`],
  },
  self: [(s) => `Meu nome é ${s}.`, (s) => `Aqui é ${s}.`],
  why: ({ company: c, title: t, city: y, industry: i }) =>
    c && t
      ? [`Como ${t} da ${c}, você deve ser a pessoa certa para avaliar isso.`, `Pensei em você por ser ${t} da ${c}.`]
      : c
        ? [`Acredito que isso pode ser útil para a ${c}${y ? ` em ${y}` : ''}.`, `Pensei na ${c} porque isso costuma fazer diferença no dia a dia de empresas como a sua.`]
        : i
          ? [`Tenho conversado com empresas de ${i} e acredito que isso pode ser útil para você.`]
          : ['Acredito que isso pode ser útil para você e sua equipe.'],
  ask: ({ company: c }) => [
    'Faz sentido conversarmos 15 minutos na próxima semana?',
    'Você teria 15 minutos esta semana para uma conversa rápida?',
    'Posso mostrar como funciona em uma conversa rápida?',
    `Esse assunto é prioridade para ${c ? `a ${c}` : 'a sua equipe'} hoje?`,
  ],
  connect: ['Vamos nos conectar?', 'Posso adicionar você à minha rede?', 'Topa nos conectarmos por aqui?'],
  signOff: { casual: 'Um abraço,', formal: 'Atenciosamente,' },
  something: 'uma solução que pode ajudar a sua equipe',
  subject: ({ first: f, company: c }, gist) =>
    c ? [`Uma ideia para a ${c}`, ...(f ? [`${f}, uma pergunta sobre a ${c}`] : []), `Para a ${c}: ${gist}`] : [capital(gist), ...(f ? [`${f}, uma ideia rápida`] : []), 'Uma ideia para a sua equipe'],
};

const EN: Phrases = {
  greet: {
    casual: [(f) => `Hi ${f},`, (f) => `Hello ${f},`, (f) => `Hi ${f}, I hope you are well.`],
    formal: [(f) => `Dear ${f},`, (f) => `Hello ${f},`],
    anonymous: 'Hello,',
  },
  hello: (f) => (f ? `Hi ${f}!` : 'Hi!'),
  offer: {
    signed: [
      (s, o) => `My name is ${s} and I work on ${o}.`,
      (s, o) => `I'm ${s}, and I'm writing to introduce ${o}.`,
      (s, o) => `This is ${s}; I'd like to introduce ${o}.`,
    ],
    unsigned: [(o) => `I'm writing to introduce ${o}.`, (o) => `I'd like to introduce ${o}.`, (o) => `I work on ${o}.`],
  },
  self: [(s) => `My name is ${s}.`, (s) => `This is ${s}.`],
  why: ({ company: c, title: t, city: y, industry: i }) =>
    c && t
      ? [`As ${t} at ${c}, you may be the right person to look at this.`, `I thought of you as ${t} at ${c}.`]
      : c
        ? [`I think it could be useful for ${c}${y ? ` in ${y}` : ''}.`, `I thought of ${c} because teams like yours often find it makes a difference day to day.`]
        : i
          ? [`I have been talking to ${i} companies, and I think it could be useful to you.`]
          : ['I think it could be useful to you and your team.'],
  ask: ({ company: c }) => [
    'Would you be open to a 15-minute call next week?',
    'Do you have 15 minutes this week for a quick chat?',
    'Could I show you how it works in a short call?',
    `Is this a priority for ${c ?? 'your team'} right now?`,
  ],
  connect: ['Would you like to connect?', 'May I add you to my network?', 'Shall we connect?'],
  signOff: { casual: 'Best regards,', formal: 'Kind regards,' },
  something: 'a solution that may help your team',
  subject: ({ first: f, company: c }, gist) =>
    c ? [`An idea for ${c}`, ...(f ? [`${f}, a question about ${c}`] : []), `For ${c}: ${gist}`] : [capital(gist), ...(f ? [`${f}, a quick idea`] : []), 'A quick idea for your team'],
};

const ES: Phrases = {
  greet: {
    casual: [(f) => `¡Hola, ${f}!`, (f) => `Hola, ${f}, ¿qué tal?`, (f) => `Hola, ${f}, ¿cómo está?`],
    formal: [(f) => `Estimado/a ${f}:`, (f) => `Hola, ${f}, ¿cómo está?`],
    anonymous: 'Hola, ¿qué tal?',
  },
  hello: (f) => (f ? `¡Hola, ${f}!` : '¡Hola!'),
  offer: {
    signed: [
      (s, o) => `Me llamo ${s} y trabajo con ${o}.`,
      (s, o) => `Soy ${s} y le escribo para presentarle ${o}.`,
      (s, o) => `Le saluda ${s}; quería presentarle ${o}.`,
    ],
    unsigned: [(o) => `Le escribo para presentarle ${o}.`, (o) => `Quería presentarle ${o}.`, (o) => `Trabajo con ${o}.`],
  },
  self: [(s) => `Me llamo ${s}.`, (s) => `Le saluda ${s}.`],
  why: ({ company: c, title: t, city: y, industry: i }) =>
    c && t
      ? [`Como ${t} en ${c}, creo que usted es la persona indicada para evaluarlo.`, `Pensé en usted por su cargo de ${t} en ${c}.`]
      : c
        ? [`Creo que puede ser útil para ${c}${y ? ` en ${y}` : ''}.`, `Pensé en ${c} porque a empresas como la suya esto suele marcarles la diferencia en el día a día.`]
        : i
          ? [`He hablado con empresas de ${i} y creo que puede serle útil.`]
          : ['Creo que puede serles útil a usted y a su equipo.'],
  ask: ({ company: c }) => [
    '¿Tendría 15 minutos la próxima semana para conversar?',
    '¿Le parece si lo conversamos en una llamada corta esta semana?',
    '¿Puedo mostrarle cómo funciona en una llamada breve?',
    `¿Es una prioridad para ${c ?? 'su equipo'} en este momento?`,
  ],
  connect: ['¿Le parece si conectamos?', '¿Conectamos?', '¿Me acepta en su red?'],
  signOff: { casual: 'Un saludo,', formal: 'Atentamente,' },
  something: 'una solución que puede ayudar a su equipo',
  subject: ({ first: f, company: c }, gist) =>
    c ? [`Una idea para ${c}`, ...(f ? [`${f}, una pregunta sobre ${c}`] : []), `Para ${c}: ${gist}`] : [capital(gist), ...(f ? [`${f}, una idea rápida`] : []), 'Una idea para su equipo'],
};

export const PHRASES: Record<WriterLanguage, Phrases> = { pt: PT, en: EN, es: ES };

export function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
