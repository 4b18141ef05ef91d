/**
 * From the words a user types ("padaria", "software house", "dentist") to CNAE activity codes,
 * by matching the descriptions of the CNAE table the release was imported with. Both sides are
 * folded (accents and case) and reduced to a crude singular, so "padarias", "Padaria" and
 * "PADARIA" meet "Padaria e confeitaria…". A short synonym list carries English and everyday
 * words the official descriptions never use.
 */
import { foldText } from '../../shared/fold-text.ts';
import type { Activity } from '../../shared/types.ts';
import { words } from '../lib/text.ts';

/** One row of the release's CNAE table, as the importer stores it in `cnaes`. */
export interface CnaeDoc {
  _id: string;
  description: string;
}

/**
 * Everyday or English terms → the words of the official descriptions. Keys and values are
 * folded; a key may be a phrase, matched whole before its words are.
 */
const SYNONYMS: Record<string, string[]> = {
  'software house': ['desenvolvimento programas computador'],
  software: ['programas computador'],
  saas: ['programas computador nao customizaveis'],
  'it services': ['tecnologia informacao'],
  ti: ['tecnologia informacao'],
  dentist: ['odontologica'],
  dentista: ['odontologica'],
  dental: ['odontologica'],
  bakery: ['padaria'],
  restaurant: ['restaurantes'],
  bar: ['bares'],
  lawyer: ['advocaticios'],
  'law firm': ['advocaticios'],
  advocacia: ['advocaticios'],
  advogado: ['advocaticios'],
  accounting: ['contabilidade'],
  accountant: ['contabilidade'],
  contador: ['contabilidade'],
  gym: ['condicionamento fisico'],
  academia: ['condicionamento fisico'],
  pharmacy: ['farmaceuticos'],
  farmacia: ['farmaceuticos'],
  drugstore: ['farmaceuticos'],
  'real estate': ['imoveis'],
  imobiliaria: ['imoveis'],
  construction: ['construcao'],
  construtora: ['construcao edificios'],
  school: ['ensino'],
  escola: ['ensino'],
  hospital: ['hospitalar'],
  clinic: ['ambulatorial'],
  clinica: ['ambulatorial'],
  doctor: ['medica'],
  medico: ['medica'],
  hotel: ['hoteis'],
  supermarket: ['supermercados'],
  mercado: ['minimercados'],
  logistics: ['transporte rodoviario carga'],
  transportadora: ['transporte rodoviario carga'],
  trucking: ['transporte rodoviario carga'],
  marketing: ['publicidade'],
  advertising: ['publicidade'],
  consulting: ['consultoria'],
  veterinarian: ['veterinarias'],
  veterinario: ['veterinarias'],
  'pet shop': ['animais estimacao'],
  petshop: ['animais estimacao'],
  'beauty salon': ['cabeleireiros'],
  'salao de beleza': ['cabeleireiros'],
  hairdresser: ['cabeleireiros'],
  mechanic: ['manutencao reparacao veiculos automotores'],
  oficina: ['manutencao reparacao veiculos automotores'],
  'car repair': ['manutencao reparacao veiculos automotores'],
  insurance: ['seguros'],
  bank: ['bancos'],
  banco: ['bancos'],
  architecture: ['arquitetura'],
  engineering: ['engenharia'],
  printing: ['impressao'],
  grafica: ['impressao'],
  clothing: ['vestuario'],
  roupas: ['vestuario'],
  shoes: ['calcados'],
  furniture: ['moveis'],
  coffee: ['cafe'],
  cafeteria: ['lanchonetes'],
  snack: ['lanchonetes'],
  lanchonete: ['lanchonetes'],
  butcher: ['acougue'],
  optician: ['optica'],
  otica: ['optica'],
  'travel agency': ['agencias viagens'],
  security: ['vigilancia seguranca'],
  cleaning: ['limpeza'],
  recruitment: ['selecao agenciamento mao obra'],
  rh: ['selecao agenciamento mao obra'],
};

/** A crude singular for Portuguese and English plurals; the same rule on both sides is what matters. */
function stem(word: string): string {
  if (word.length <= 3) return word;
  if (word.endsWith('oes') || word.endsWith('aes')) return `${word.slice(0, -3)}ao`;
  if (word.endsWith('ais')) return `${word.slice(0, -3)}al`;
  if (word.endsWith('eis')) return `${word.slice(0, -3)}el`;
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('ns')) return `${word.slice(0, -2)}m`;
  if (word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

const stems = (text: string) => words(text).map(stem);

/** A query word of at least this many letters also matches words it begins ("odontolog" → "odontologica"). */
const PREFIX_MIN = 5;

export class ActivityMatcher {
  private readonly indexed: Array<Activity & { stems: Set<string> }>;

  constructor(activities: Iterable<Activity>) {
    this.indexed = [...activities]
      .map((a) => ({ ...a, stems: new Set(stems(a.description)) }))
      .sort((a, b) => (a.code < b.code ? -1 : 1));
  }

  get size(): number {
    return this.indexed.length;
  }

  /** The activities a phrase names, by code; empty when it names none. */
  match(phrase: string): Activity[] {
    const folded = foldText(phrase);
    const alternatives = SYNONYMS[folded] ?? [
      folded
        .split(' ')
        .flatMap((w) => SYNONYMS[w] ?? SYNONYMS[stem(w)] ?? [w])
        .join(' '),
    ];
    const found = new Map<string, Activity>();
    for (const alternative of alternatives) {
      const wanted = stems(alternative);
      if (wanted.length === 0) continue;
      for (const activity of this.indexed) {
        if (wanted.every((w) => this.has(activity.stems, w))) {
          found.set(activity.code, { code: activity.code, description: activity.description });
        }
      }
    }
    return [...found.values()].sort((a, b) => (a.code < b.code ? -1 : 1));
  }

  /** Every subclass whose code begins with a division, group or class code. */
  byPrefix(prefix: string): Activity[] {
    return this.indexed.filter((a) => a.code.startsWith(prefix)).map(({ code, description }) => ({ code, description }));
  }

  get(code: string): Activity | undefined {
    const found = this.indexed.find((a) => a.code === code);
    return found && { code: found.code, description: found.description };
  }

  private has(stemsOf: Set<string>, word: string): boolean {
    if (stemsOf.has(word)) return true;
    if (word.length < PREFIX_MIN) return false;
    for (const s of stemsOf) if (s.startsWith(word)) return true;
    return false;
  }
}
