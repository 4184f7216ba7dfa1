/** A bound on line length, for a stream whose writer is not trusted to end its lines. */
export interface LineLimit {
  /** The longest line accepted, in characters (UTF-16 code units), its newline not counted. */
  maxLength: number;
  /**
   * Called once for a line that grew past `maxLength`, with the length seen when it did. The
   * line is dropped, and what follows up to its newline too: memory stays bounded.
   */
  onOverflow(length: number): void;
}

/**
 * Splits a text stream into lines: the framing of MCP's stdio transport (one JSON message
 * per line). Partial lines are kept as a list of pieces and joined once, so a megabyte
 * message arriving in many chunks costs one copy, not one per chunk. Without a limit, a
 * writer that never sends a newline grows the pieces until the process runs out of memory
 * (or the join exceeds V8's string length and throws).
 */
export class LineSplitter {
  private pieces: string[] = [];
  /** Characters held in `pieces`. */
  private held = 0;
  /** Inside a line that went over the limit: everything up to its newline is dropped. */
  private dropping = false;

  constructor(private readonly limit?: LineLimit) {}

  /** Calls `onLine` for every complete, non-blank line (trimmed, so CRLF works too). */
  push(chunk: string, onLine: (line: string) => void): void {
    let start = 0;
    let nl: number;
    while ((nl = chunk.indexOf('\n', start)) !== -1) {
      const from = start;
      start = nl + 1;
      if (this.dropping) {
        this.dropping = false;
        continue;
      }
      if (this.overflows(nl - from, true)) continue;
      let line = chunk.slice(from, nl);
      if (this.pieces.length > 0) {
        this.pieces.push(line);
        line = this.pieces.join('');
        this.pieces = [];
        this.held = 0;
      }
      line = line.trim();
      if (line) onLine(line);
    }
    if (start >= chunk.length || this.dropping || this.overflows(chunk.length - start, false)) return;
    this.pieces.push(chunk.slice(start));
    this.held += chunk.length - start;
  }

  /**
   * Whether the current line, with `more` characters, is over the limit; if so it is dropped
   * (and, when its newline has not arrived yet, the rest of it too).
   */
  private overflows(more: number, complete: boolean): boolean {
    const length = this.held + more;
    if (!this.limit || length <= this.limit.maxLength) return false;
    this.pieces = [];
    this.held = 0;
    this.dropping = !complete;
    this.limit.onOverflow(length);
    return true;
  }
}
