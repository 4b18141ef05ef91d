/**
 * An answer that is a file rather than JSON (an export): its media type, the name a client saves
 * it under, and the bytes of it to send. Only the HTTP binding writes one; an operation that
 * answers one (`file` in its registry entry) is no tool, so MCP and the agent never meet it.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';

export class FileAnswer {
  constructor(
    readonly mediaType: string,
    readonly fileName: string,
    readonly path: string,
    /** Bytes to send from the start of the file: what is complete of it (a file still being written has more). */
    readonly length: number,
  ) {}

  open(): Readable {
    // `end` is inclusive, so an empty range is no read at all.
    return this.length === 0 ? Readable.from([]) : createReadStream(this.path, { start: 0, end: this.length - 1 });
  }
}
