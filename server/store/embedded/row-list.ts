/**
 * A set of row numbers (see table.ts) as a sorted array: an index bucket of a few to a few
 * thousand rows. It takes 4 bytes a row where a Set takes about 20, and an index build, which
 * files rows in increasing order, appends each at the end; a Set's hashing was the largest cost
 * of building a million-row table's indexes. Testing a row is a binary search in contiguous memory.
 */
export class RowList {
  private rows: Uint32Array;
  size = 0;

  constructor(...rows: number[]) {
    this.rows = new Uint32Array(Math.max(4, rows.length));
    for (const row of rows) this.add(row);
  }

  /** Where `row` is, or where it would go. */
  private position(row: number): number {
    let low = 0;
    let high = this.size;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.rows[middle]! < row) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  has(row: number): boolean {
    const at = this.position(row);
    return at < this.size && this.rows[at] === row;
  }

  add(row: number): void {
    const at = this.size > 0 && this.rows[this.size - 1]! < row ? this.size : this.position(row);
    if (at < this.size && this.rows[at] === row) return;
    if (this.size === this.rows.length) {
      const grown = new Uint32Array(this.rows.length * 2);
      grown.set(this.rows);
      this.rows = grown;
    }
    if (at < this.size) this.rows.copyWithin(at + 1, at, this.size);
    this.rows[at] = row;
    this.size++;
  }

  delete(row: number): boolean {
    const at = this.position(row);
    if (at === this.size || this.rows[at] !== row) return false;
    this.rows.copyWithin(at, at + 1, this.size);
    this.size--;
    return true;
  }

  first(): number {
    return this.rows[0]!;
  }

  *[Symbol.iterator](): Generator<number> {
    for (let i = 0; i < this.size; i++) yield this.rows[i]!;
  }
}
