/**
 * JSON passed through as bytes: a handler may put stored documents into its answer as the JSON the
 * store keeps (`Store.jsonByIds`) instead of parsing them only for the binding to write them again
 * (issue 35: that was most of a 500-CNPJ batch's time). Only a binding that writes the answer
 * itself asks for it (`HandlerContext.rawJson`: HTTP without an Idempotency-Key); MCP, the agent
 * and the idempotency store always get objects.
 */

/** A JSON value as UTF-8 bytes, in pieces (copied once, into the answer), written as they are. */
export class RawJson {
  constructor(readonly pieces: readonly Buffer[]) {}

  /** The object `object` with `fields` added after its own members. */
  static withFields(object: Buffer, fields: Record<string, unknown>): RawJson {
    const added = JSON.stringify(fields);
    if (added === '{}') return new RawJson([object]);
    const empty = object.length === 2;
    return new RawJson([object.subarray(0, object.length - 1), Buffer.from(empty ? added.slice(1) : `,${added.slice(1)}`)]);
  }

  /** Should it reach `JSON.stringify` anyway, the value itself: the answer is the same, only slower. */
  toJSON(): unknown {
    return JSON.parse(Buffer.concat(this.pieces).toString('utf8'));
  }
}

/** Answers holding RawJson, as their handler marked them: only these are written by `jsonBytes`. */
const holding = new WeakSet<object>();

/** Marks a handler's answer as holding RawJson values (anywhere in its arrays and plain objects). */
export function holdsRaw<T extends object>(answer: T): T {
  holding.add(answer);
  return answer;
}

export const isHoldingRaw = (value: unknown): value is object => typeof value === 'object' && value !== null && holding.has(value);

/** `JSON.stringify(value)` as bytes, with each RawJson's bytes in its place. */
export function jsonBytes(value: unknown): Buffer {
  const pieces: Buffer[] = [];
  let text = '';
  const write = (v: unknown): void => {
    if (v instanceof RawJson) {
      pieces.push(Buffer.from(text), ...v.pieces);
      text = '';
    } else if (Array.isArray(v)) {
      text += '[';
      for (let i = 0; i < v.length; i++) {
        if (i > 0) text += ',';
        const item: unknown = v[i];
        if (item === undefined || typeof item === 'function' || typeof item === 'symbol') text += 'null';
        else write(item);
      }
      text += ']';
    } else if (isPlainObject(v)) {
      text += '{';
      let first = true;
      for (const key of Object.keys(v)) {
        const field = v[key];
        if (field === undefined || typeof field === 'function' || typeof field === 'symbol') continue;
        text += `${first ? '' : ','}${JSON.stringify(key)}:`;
        first = false;
        write(field);
      }
      text += '}';
    } else {
      // Numbers, strings, null, booleans, Dates and anything with its own toJSON: as JSON.stringify writes them.
      text += JSON.stringify(v) ?? 'null';
    }
  };
  write(value);
  pieces.push(Buffer.from(text));
  return Buffer.concat(pieces);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || 'toJSON' in value) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
