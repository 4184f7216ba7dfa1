/**
 * Splits a text stream into lines: the framing of MCP's stdio transport (one JSON message
 * per line). Partial lines are kept as a list of pieces and joined once, so a megabyte
 * message arriving in many chunks costs one copy, not one per chunk.
 */
export class LineSplitter {
  private pieces: string[] = [];

  /** Calls `onLine` for every complete, non-blank line (trimmed, so CRLF works too). */
  push(chunk: string, onLine: (line: string) => void): void {
    let start = 0;
    let nl: number;
    while ((nl = chunk.indexOf('\n', start)) !== -1) {
      let line = chunk.slice(start, nl);
      if (this.pieces.length > 0) {
        this.pieces.push(line);
        line = this.pieces.join('');
        this.pieces = [];
      }
      line = line.trim();
      if (line) onLine(line);
      start = nl + 1;
    }
    if (start < chunk.length) this.pieces.push(chunk.slice(start));
  }
}
