/**
 * Splits a stream of text chunks into newline-terminated lines (the stdio transport's
 * framing). Only the chunk tail after the last newline is carried over, so a 1 MiB
 * line arriving in 64 KiB chunks is joined once, not re-scanned per chunk.
 */
export class LineSplitter {
  private carry: string[] = [];

  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: string): void {
    let start = 0;
    let newline = chunk.indexOf('\n');
    while (newline !== -1) {
      let line = chunk.slice(start, newline);
      if (this.carry.length > 0) {
        line = this.carry.join('') + line;
        this.carry = [];
      }
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line !== '') this.onLine(line);
      start = newline + 1;
      newline = chunk.indexOf('\n', start);
    }
    if (start < chunk.length) this.carry.push(chunk.slice(start));
  }
}
