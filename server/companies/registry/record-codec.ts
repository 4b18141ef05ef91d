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

/**
 * The tables with a dictionary made of `samples` (documents of the release, the first batch's):
 * the end of their encodings, end to end. Taken as they come, only the last ones' text kept, so
 * that samples built one at a time are never held together.
 */
export function withDictionary(tables: CodecTables, samples: Iterable<unknown>): CodecTables {
  const encoder = new RecordEncoder(tables);
  const texts: Buffer[] = [];
  let bytes = 0;
  for (const sample of samples) {
    const text = Buffer.from(encoder.text(sample));
    texts.push(text);
    bytes += text.length;
    while (bytes - texts[0]!.length >= DICTIONARY_BYTES) bytes -= texts.shift()!.length;
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

/** The bytes of a separator, and of the constants the decoder writes. */
const SEP_BYTE = SEP.charCodeAt(0);
const NULL = Buffer.from('null');
const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export class RecordDecoder {
  /** Per shape, what precedes each value (`{"a":`, `,"b":`), as bytes. */
  private readonly shapes: Buffer[][];
  /** The string table, each as its JSON text's bytes. */
  private readonly strings: Buffer[];
  private readonly lz: DictionaryLz;
  /** Where a document's JSON is written before it is copied out; grown as needed. */
  private out = Buffer.allocUnsafe(16 * 1024);
  private o = 0;

  constructor(tables: CodecTables) {
    this.shapes = tables.shapes.map(prefixesOf);
    this.strings = tables.strings.map((s) => Buffer.from(JSON.stringify(s)));
    this.lz = new DictionaryLz(Buffer.from(tables.dictionary, 'base64'));
  }

  /**
   * The document's JSON text as UTF-8 bytes, from what its file stores: written byte by byte from
   * the decompressed tokens, never through a JS string (a string and its conversion to bytes were
   * a third of a 500-CNPJ batch's time in the server).
   */
  bytes(stored: Uint8Array): Buffer {
    const { bytes, start, end } = this.lz.decompress(stored);
    this.o = 0;
    const next = this.read(bytes, start, end);
    if (next !== end) throw new Error('a registry document has more values than its shape');
    return Buffer.from(this.out.subarray(0, this.o));
  }

  /** The document's JSON text, from what its file stores. */
  decode(stored: Uint8Array): string {
    return this.bytes(stored).toString('utf8');
  }

  /** Writes the value whose token starts at `i`; answers where the next token starts (`end` after the last). */
  private read(b: Uint8Array, i: number, end: number): number {
    if (i >= end) throw new Error('a registry document ends early');
    let stop = b.indexOf(SEP_BYTE, i);
    if (stop < 0 || stop > end) stop = end;
    const next = stop === end ? end : stop + 1;
    switch (b[i]) {
      case 0x6e: // n
        this.write(NULL);
        return next;
      case 0x74: // t
        this.write(TRUE);
        return next;
      case 0x66: // f
        this.write(FALSE);
        return next;
      case 0x23: // #
      case 0x6a: // j
        this.copy(b, i + 1, stop);
        return next;
      case 0x72: // r
        this.write(this.strings[this.integer(b, i + 1, stop)] ?? fail('a registry document names a string its table lacks'));
        return next;
      case 0x73: // s: JSON.stringify's text, which escapes only these two in a string of no control characters or surrogates
        this.ensure(2 * (stop - i) + 2);
        this.out[this.o++] = QUOTE;
        for (let j = i + 1; j < stop; j++) {
          const c = b[j]!;
          if (c === QUOTE || c === BACKSLASH) this.out[this.o++] = BACKSLASH;
          this.out[this.o++] = c;
        }
        this.out[this.o++] = QUOTE;
        return next;
      case 0x5b: {
        // [
        const count = this.integer(b, i + 1, stop);
        this.byte(0x5b);
        let at = next;
        for (let n = 0; n < count; n++) {
          if (n > 0) this.byte(0x2c);
          at = this.read(b, at, end);
        }
        this.byte(0x5d);
        return at;
      }
      case 0x7b: // {
        return this.object(this.shapes[this.integer(b, i + 1, stop)] ?? fail('a registry document names a shape its table lacks'), b, next, end);
      case 0x4b: // K
        return this.object(prefixesOf(JSON.parse(Buffer.from(b.buffer, b.byteOffset + i + 1, stop - i - 1).toString('utf8')) as string[]), b, next, end);
      default:
        throw new Error(`a registry document holds an unknown token ${JSON.stringify(Buffer.from(b.subarray(i, Math.min(stop, i + 8))).toString('utf8'))}`);
    }
  }

  private object(prefixes: Buffer[], b: Uint8Array, at: number, end: number): number {
    if (prefixes.length === 0) {
      this.byte(0x7b);
      this.byte(0x7d);
      return at;
    }
    for (const prefix of prefixes) {
      this.write(prefix);
      at = this.read(b, at, end);
    }
    this.byte(0x7d);
    return at;
  }

  /** The decimal integer in `b` from `i` to `stop`. */
  private integer(b: Uint8Array, i: number, stop: number): number {
    if (i === stop) throw new Error('a registry document holds a token without its number');
    let n = 0;
    for (let j = i; j < stop; j++) {
      const d = b[j]! - 0x30;
      if (d < 0 || d > 9) throw new Error('a registry document holds a token with a malformed number');
      n = n * 10 + d;
    }
    return n;
  }

  private write(bytes: Buffer): void {
    this.ensure(bytes.length);
    bytes.copy(this.out, this.o);
    this.o += bytes.length;
  }

  private copy(b: Uint8Array, from: number, to: number): void {
    this.ensure(to - from);
    this.out.set(b.subarray(from, to), this.o);
    this.o += to - from;
  }

  private byte(c: number): void {
    this.ensure(1);
    this.out[this.o++] = c;
  }

  private ensure(room: number): void {
    if (this.o + room <= this.out.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.out.length * 2, this.o + room));
    this.out.copy(grown, 0, 0, this.o);
    this.out = grown;
  }
}

function fail(message: string): never {
  throw new Error(message);
}

function prefixesOf(names: string[]): Buffer[] {
  return names.map((name, i) => Buffer.from(`${i === 0 ? '{' : ','}${JSON.stringify(name)}:`));
}
