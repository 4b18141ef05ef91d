/**
 * A block: one journal (or snapshot) line of bulk-loaded documents that stays encoded in memory.
 *
 * Parsing a million registry documents and keeping them as objects cost a server 45 s and 3 GiB
 * at start-up, mostly in JSON.parse and the garbage collector, and the indexes then needed every
 * document parsed again to find its keys. A block line carries, beside its documents, where each
 * one ends and the values of the collection's indexed fields, so start-up reads only that small
 * header: the documents stay as the line's bytes (outside the heap) and each is parsed when a
 * query fetches it, and an index is built from the keys without touching a document.
 *
 * The line is still an ordinary journal line, valid JSON with `c`, `put` and `del`, so anything
 * that reads lines whole (a one-shot process's lazy tables, an older version) reads it as before:
 *
 *   {"c":NAME,"n":META_BYTES,"block":META,"k":{FIELD:[values of each document],…},"put":[DOCS],"del":[]}
 *
 * META is `{"ids":[…],"ends":[…],"fields":{FIELD:[start,end]},"multi":[FIELD…],"single":[FIELD…],"kBytes":N}`:
 * each document's end in DOCS (it starts after the previous one's comma), each field's place in
 * the `k` object, the fields on which some document held an array (MongoDB's multikey), and those
 * where every document held one scalar. A document's values for a field are those an index files
 * it under (see indexes.ts), or 0 when it lacks the field (which a sparse index skips); for a
 * `single` field, the scalar alone (parsing a million one-element arrays took a second).
 */
import type { EncodedDocuments } from '../port.ts';
import { decode, encode, type Doc } from './codec.ts';
import { collectFieldValues, type FieldValues } from './indexes.ts';

interface BlockMeta {
  ids: string[];
  ends: number[];
  fields: Record<string, [number, number]>;
  multi: string[];
  single: string[];
  kBytes: number;
}

/** A field's values in a block, a document's at its position: each a FieldValues, or for a `single` field the scalar. */
export interface Column {
  single: boolean;
  values: unknown[];
}

const HEAD = /^\{"c":("(?:[^"\\]|\\.)*"),"n":(\d+),"block":/;
const HEAD_BYTES = 512;
const N_MARK = Buffer.from(',"n":');
const K_PREFIX = ',"k":';
const PUT_PREFIX = ',"put":[';
const TAIL = '],"del":[]}';

/**
 * Documents parsed from a block for one read, which nothing else holds: a reader may have them
 * without the copy stored objects need (copying 500 of them was a tenth of a CNPJ batch). One
 * that gets stored stops being one (see `claim`).
 */
const unshared = new WeakSet<Doc>();

export const isUnshared = (doc: Doc): boolean => unshared.has(doc);

/** A parsed document is being stored: from now on it is shared, and readers get copies. */
export const claim = (doc: Doc): void => void unshared.delete(doc);

/** A document kept as its bytes in a block; parsed each time it is read. */
export class EncodedDoc {
  constructor(
    readonly block: Block,
    readonly at: number,
  ) {}

  decode(): Doc {
    return this.block.decodeAt(this.at);
  }
}

/** A block's kept keys do not add up: damage, found when an index is built from them. */
export class BlockKeysError extends Error {
  constructor(
    readonly block: Block,
    message: string,
  ) {
    super(message);
  }
}

export class Block {
  /** Each document's bytes in `line`, [starts[i], ends[i]). */
  private readonly starts: Uint32Array;
  private readonly ends: Uint32Array;
  private readonly kStart: number;

  private constructor(
    /** The whole line (without its newline): kept, because the documents are its bytes. */
    readonly line: Buffer,
    readonly collection: string,
    readonly ids: readonly string[],
    private readonly meta: BlockMeta,
    kStart: number,
    putStart: number,
  ) {
    this.kStart = kStart;
    this.starts = new Uint32Array(meta.ends.length);
    this.ends = new Uint32Array(meta.ends.length);
    let start = putStart;
    meta.ends.forEach((end, i) => {
      this.starts[i] = start;
      this.ends[i] = putStart + end;
      start = putStart + end + 1;
    });
  }

  /**
   * The block a line holds, or undefined for an ordinary line; a line that claims to be a block
   * but does not add up is refused (the caller names the file and line).
   */
  static parse(line: Buffer): Block | undefined {
    // Every line of a start-up comes here; an ordinary one is told apart without decoding its head.
    const start = line.subarray(0, HEAD_BYTES);
    if (start.indexOf(N_MARK) === -1) return undefined;
    const head = HEAD.exec(start.toString('latin1'));
    if (!head) return undefined;
    const collection = JSON.parse(Buffer.from(head[1]!, 'latin1').toString('utf8')) as string;
    const metaStart = head[0].length;
    const metaEnd = metaStart + Number(head[2]);
    const meta = decode(line.toString('utf8', metaStart, metaEnd)) as BlockMeta;
    if (!isMeta(meta)) throw new Error('its block header is malformed');
    const kStart = metaEnd + K_PREFIX.length;
    const putStart = kStart + meta.kBytes + PUT_PREFIX.length;
    const putEnd = line.length - TAIL.length;
    const lastEnd = meta.ends.at(-1) ?? 0;
    if (
      line.toString('latin1', metaEnd, kStart) !== K_PREFIX ||
      line.toString('latin1', putStart - PUT_PREFIX.length, putStart) !== PUT_PREFIX ||
      line.toString('latin1', putEnd) !== TAIL ||
      putStart + lastEnd !== putEnd
    ) {
      throw new Error('its block header does not match its documents');
    }
    // A block keeps the chunk of the file it was read in (see lines.ts) rather than a copy, unless
    // it is small beside it: copying start-up's 2 GiB of blocks took a quarter of its time, and a
    // chunk of large blocks wastes only the pieces of the one line it splits with the next chunk.
    const own = line.length * 32 >= line.buffer.byteLength ? line : Buffer.from(line);
    return new Block(own, collection, meta.ids, meta, kStart, putStart);
  }

  get count(): number {
    return this.ids.length;
  }

  /** Where the document at `at` lies in `line`. */
  span(at: number): [start: number, end: number] {
    return [this.starts[at]!, this.ends[at]!];
  }

  decodeAt(at: number): Doc {
    const doc = decode(this.line.toString('utf8', this.starts[at], this.ends[at])) as Doc;
    unshared.add(doc);
    return doc;
  }

  /** Whether the block holds every document's values for all these fields. */
  hasKeys(fields: readonly string[]): boolean {
    return fields.every((field) => field in this.meta.fields);
  }

  multikey(field: string): boolean {
    return this.meta.multi.includes(field);
  }

  /** Each document's values for `field` (see the header comment); parsed at each call, not kept. */
  column(field: string): Column {
    const [start, end] = this.meta.fields[field]!;
    const values = decode(this.line.toString('utf8', this.kStart + start, this.kStart + end));
    if (!Array.isArray(values) || values.length !== this.count) throw new BlockKeysError(this, `block keys of ${field} do not match its documents`);
    return { single: this.meta.single.includes(field), values };
  }
}

function isMeta(meta: unknown): meta is BlockMeta {
  if (typeof meta !== 'object' || meta === null) return false;
  const { ids, ends, fields, multi, single, kBytes } = meta as Partial<BlockMeta>;
  return (
    Array.isArray(ids) &&
    ids.every((id) => typeof id === 'string') &&
    Array.isArray(ends) &&
    ends.length === ids.length &&
    ends.every((end, i) => Number.isInteger(end) && end > (i === 0 ? 0 : ends[i - 1]!)) &&
    typeof fields === 'object' &&
    fields !== null &&
    Object.values(fields).every((range) => Array.isArray(range) && range.length === 2 && range.every(Number.isInteger)) &&
    Array.isArray(multi) &&
    Array.isArray(single) &&
    Number.isInteger(kBytes)
  );
}

const isScalar = (value: unknown) => value === null || ['string', 'number', 'boolean'].includes(typeof value);

/** What a block line is made of: documents encoded one at a time by `encodeDocuments` (bulk-load.ts). */
export type BlockParts = EncodedDocuments;

/** Gathers each document's indexed values as documents are encoded, for a block line. */
export class KeyCollector {
  private readonly values: FieldValues[][];
  private readonly paths: string[][];
  private readonly multi = new Set<string>();

  /** `textOf`: how the collected values are written; `encode` unless the documents hold no tagged value. */
  constructor(
    private readonly fields: readonly string[],
    private readonly textOf: (value: unknown) => string = encode,
  ) {
    this.values = fields.map(() => []);
    this.paths = fields.map((field) => field.split('.'));
  }

  add(doc: Doc): void {
    for (let i = 0; i < this.fields.length; i++) {
      const { values, multikey } = collectFieldValues(doc, this.paths[i]!);
      this.values[i]!.push(values);
      if (multikey) this.multi.add(this.fields[i]!);
    }
  }

  finish(): Pick<BlockParts, 'keys' | 'fields' | 'multi' | 'single'> {
    const fields: Record<string, [number, number]> = {};
    const single: string[] = [];
    let text = '{';
    let bytes = 1;
    this.fields.forEach((field, i) => {
      const name = `${i === 0 ? '' : ','}${JSON.stringify(field)}:`;
      const scalars = this.values[i]!.every((values) => values !== 0 && values.length === 1 && isScalar(values[0]));
      if (scalars) single.push(field);
      const value = this.textOf(scalars ? this.values[i]!.map((values) => (values as unknown[])[0]) : this.values[i]);
      text += name + value;
      const start = bytes + Buffer.byteLength(name);
      bytes = start + Buffer.byteLength(value);
      fields[field] = [start, bytes];
    });
    return { keys: `${text}}`, fields, multi: [...this.multi], single };
  }
}

/** The block line for `parts`, newline included. */
export function blockLine(collection: string, parts: BlockParts): Buffer {
  const keys = Buffer.from(parts.keys);
  const meta: BlockMeta = { ids: parts.ids, ends: parts.ends, fields: parts.fields, multi: parts.multi, single: parts.single, kBytes: keys.length };
  const metaText = Buffer.from(JSON.stringify(meta));
  return Buffer.concat([
    Buffer.from(`{"c":${JSON.stringify(collection)},"n":${metaText.length},"block":`),
    metaText,
    Buffer.from(K_PREFIX),
    keys,
    Buffer.from(PUT_PREFIX),
    parts.bytes,
    Buffer.from(`${TAIL}\n`),
  ]);
}
