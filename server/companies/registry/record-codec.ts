/**
 * The compact encoding of a registry document: its values in order, without the member names
 * (each object refers to its shape, the list of its names) and with the release's repeated texts
 * (code tables' descriptions, city names, the fixed words of the layout) as numbers into a table
 * of strings. Decoding writes the JSON text directly, byte for byte what `JSON.stringify` writes
 * of the document, so the batch lookup passes it on without building an object.
 *
 * The encoded text is then compressed against a dictionary of documents of the same release
 * (dictionary-lz.ts). Measured on a synthetic release (issue 41), a document of 1,600 bytes of
 * JSON: 470 bytes encoded, 205 compressed (the JSON itself compressed the same way: 350; per-row
 * deflate with a 32 KiB dictionary: 240, but inflating costs 25 to 80 µs per document, a new zlib
 * context each time, 12 to 40 ms for a 500-CNPJ batch).
 *
 * Tokens are separated by U+001F; the first character says what each is: `{N` an object of
 * shape N, `KJSON` an object whose names are given (a shape the table lacks), `[N` an array of
 * N values, `n` `t` `f` null, true, false, `#` a number, `rN` string N of the table, `s` a string
 * without control characters or surrogates, `j` any other string as JSON.
 */
import { DictionaryLz } from './dictionary-lz.ts';

const SEP = '\x1f';
const PLAIN = /^[^\x00-\x1f\ud800-\udfff]*$/;

/**
 * The shapes of the record's objects when the codec was written (issue 41): any other shape is
 * written with its names, so a record that grows a field stays exact, only larger.
 */
export const KNOWN_SHAPES: readonly string[][] = [
  ['code', 'description'],
  ['option', 'since', 'until'],
  ['areaCode', 'number'],
  [
    'cnpj', 'root', 'name', 'tradeName', 'establishment', 'registrationStatus', 'registrationStatusDate', 'registrationStatusReason',
    'openingDate', 'mainActivity', 'secondaryActivities', 'legalNature', 'capital', 'fiscalSize', 'simplesOption', 'meiOption', 'size',
    'responsibleQualification', 'federativeEntity', 'specialSituation', 'specialSituationDate', 'phone1', 'phone2', 'fax', 'foreignCity',
    'country', 'simples', 'mei', 'address', 'phones', 'email', 'partners', 'release',
  ],
  ['street', 'number', 'complement', 'district', 'zipCode', 'city', 'cityCode', 'state', 'country'],
  ['name', 'document', 'qualification', 'since', 'type', 'qualificationCode', 'country', 'ageBand', 'legalRepresentative'],
  ['document', 'name', 'qualification'],
];

/** Words of the layout itself, beside the code tables' descriptions. */
const FIXED_STRINGS = ['MATRIZ', 'FILIAL', 'ATIVA', 'BAIXADA', 'INAPTA', 'SUSPENSA', 'NULA', 'MICRO EMPRESA', 'EMPRESA DE PEQUENO PORTE', 'DEMAIS', 'NAO INFORMADO'];

/** The tables a release file keeps beside its documents, so that it decodes whatever the code that reads it. */
export interface CodecTables {
  shapes: string[][];
  strings: string[];
  /** The compression's dictionary, base64: documents of the release, encoded (see `withDictionary`). */
  dictionary: string;
}

/** Bytes of encoded documents the dictionary holds (the compressor reaches back 64 KiB). */
const DICTIONARY_BYTES = 65_535;

/** The string table of a release: the fixed words and every description of its code tables, in one order for every thread. */
export function codecTables(lookups: Record<string, ReadonlyMap<string, string>>, release: string): CodecTables {
  const strings = new Set<string>(FIXED_STRINGS);
  strings.add(release);
  for (const table of Object.keys(lookups).sort()) for (const value of lookups[table]!.values()) if (value !== '') strings.add(value);
  return { shapes: KNOWN_SHAPES.map((s) => [...s]), strings: [...strings].sort(), dictionary: '' };
}

/** The tables with a dictionary made of `samples` (documents of the release, the first batch's): their encodings, end to end. */
export function withDictionary(tables: CodecTables, samples: unknown[]): CodecTables {
  const encoder = new RecordEncoder(tables);
  const texts: Buffer[] = [];
  let bytes = 0;
  for (let i = samples.length - 1; i >= 0 && bytes < DICTIONARY_BYTES; i--) {
    const text = Buffer.from(encoder.text(samples[i]));
    texts.unshift(text);
    bytes += text.length;
  }
  const joined = Buffer.concat(texts);
  return { ...tables, dictionary: joined.subarray(Math.max(0, joined.length - DICTIONARY_BYTES)).toString('base64') };
}

export class RecordEncoder {
  /** Per first member name, the shapes starting with it (compared name by name: no string is built per object). */
  private readonly shapes = new Map<string, Array<{ token: string; names: string[] }>>();
  /** Each string of the table, as its token: made once, not per value written. */
  private readonly strings = new Map<string, string>();
  private readonly lz: DictionaryLz;

  constructor(tables: CodecTables) {
    tables.shapes.forEach((names, id) => {
      const list = this.shapes.get(names[0] ?? '') ?? [];
      list.push({ token: `{${id}`, names });
      this.shapes.set(names[0] ?? '', list);
    });
    tables.strings.forEach((text, i) => this.strings.set(text, `r${i}`));
    this.lz = new DictionaryLz(Buffer.from(tables.dictionary, 'base64'));
  }

  /** The document encoded and compressed, as its file stores it. */
  encode(value: unknown): Uint8Array {
    return this.lz.compressText(this.text(value));
  }

  /** The document encoded, before compression. */
  text(value: unknown): string {
    const out: string[] = [];
    this.write(value, out);
    return out.join(SEP);
  }

  private write(value: unknown, out: string[]): void {
    if (value === null || value === undefined) out.push('n');
    else if (value === true) out.push('t');
    else if (value === false) out.push('f');
    else if (typeof value === 'number') out.push(Number.isFinite(value) ? `#${value}` : 'n');
    else if (typeof value === 'string') {
      const ref = this.strings.get(value);
      if (ref !== undefined) out.push(ref);
      else out.push(PLAIN.test(value) ? `s${value}` : `j${JSON.stringify(value)}`);
    } else if (Array.isArray(value)) {
      out.push(`[${value.length}`);
      for (const item of value) this.write(item, out);
    } else if (typeof value === 'object') {
      const record = value as Record<string, unknown>;
      let names = Object.keys(record);
      if (names.some((name) => record[name] === undefined)) names = names.filter((name) => record[name] !== undefined);
      const shape = this.shapeOf(names);
      out.push(shape ?? `K${JSON.stringify(names)}`);
      for (const name of names) this.write(record[name], out);
    } else {
      throw new TypeError(`a registry document cannot hold a ${typeof value}`);
    }
  }

  /** The token of the object's shape, if the table has it. */
  private shapeOf(names: string[]): string | undefined {
    const candidates = this.shapes.get(names[0] ?? '');
    if (!candidates) return undefined;
    for (const { token, names: known } of candidates) {
      if (known.length !== names.length) continue;
      let same = true;
      for (let i = 1; same && i < names.length; i++) same = known[i] === names[i];
      if (same) return token;
    }
    return undefined;
  }
}

export class RecordDecoder {
  /** Per shape, what precedes each value (`{"a":`, `,"b":`). */
  private readonly shapes: string[][];
  private readonly strings: string[];
  private readonly lz: DictionaryLz;

  constructor(tables: CodecTables) {
    this.shapes = tables.shapes.map(prefixesOf);
    this.strings = tables.strings.map((s) => JSON.stringify(s));
    this.lz = new DictionaryLz(Buffer.from(tables.dictionary, 'base64'));
  }

  /** The document's JSON text, from what its file stores. */
  decode(stored: Uint8Array): string {
    const { bytes, start, end } = this.lz.decompress(stored);
    const tokens = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8', start, end).split(SEP);
    const at = { i: 0 };
    const json = this.read(tokens, at);
    if (at.i !== tokens.length) throw new Error('a registry document has more values than its shape');
    return json;
  }

  private read(tokens: string[], at: { i: number }): string {
    const token = tokens[at.i++];
    if (token === undefined) throw new Error('a registry document ends early');
    const rest = token.slice(1);
    switch (token.charCodeAt(0)) {
      case 0x6e: // n
        return 'null';
      case 0x74: // t
        return 'true';
      case 0x66: // f
        return 'false';
      case 0x23: // #
        return rest;
      case 0x72: // r
        return this.strings[Number(rest)]!;
      case 0x73: // s
        return rest.includes('"') || rest.includes('\\') ? JSON.stringify(rest) : `"${rest}"`;
      case 0x6a: // j
        return rest;
      case 0x5b: {
        // [
        const count = Number(rest);
        let json = '[';
        for (let n = 0; n < count; n++) json += (n === 0 ? '' : ',') + this.read(tokens, at);
        return json + ']';
      }
      case 0x7b: {
        // {
        const prefixes = this.shapes[Number(rest)]!;
        if (prefixes.length === 0) return '{}';
        let json = '';
        for (const prefix of prefixes) json += prefix + this.read(tokens, at);
        return json + '}';
      }
      case 0x4b: {
        // K
        const prefixes = prefixesOf(JSON.parse(rest) as string[]);
        if (prefixes.length === 0) return '{}';
        let json = '';
        for (const prefix of prefixes) json += prefix + this.read(tokens, at);
        return json + '}';
      }
      default:
        throw new Error(`a registry document holds an unknown token ${JSON.stringify(token.slice(0, 8))}`);
    }
  }
}

function prefixesOf(names: string[]): string[] {
  return names.map((name, i) => `${i === 0 ? '{' : ','}${JSON.stringify(name)}:`);
}
