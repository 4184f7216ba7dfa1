export interface SseHandlers {
  /** A complete event with data. `type` is '' when the event named none. */
  event(data: string, type: string): void;
  /** The server's reconnection delay hint, in ms. */
  retry?(ms: number): void;
  /**
   * An event grew past the parser's limit, with this many characters seen: called once, and
   * the parser ignores the rest of the stream (the caller is expected to drop it).
   */
  overflow?(length: number): void;
}

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const BOM = 0xfeff;

/**
 * An incremental parser for a text/event-stream body, as the HTML standard defines it: lines
 * end with CRLF, LF or CR (a CRLF may be split across chunks), `:` starts a comment, a field
 * without a colon has an empty value, one leading space of a value is dropped, data lines
 * join with LF, and a blank line dispatches. An event without data is not dispatched, but its
 * id still counts: MCP servers send exactly that ("priming" events) so a client can resume a
 * stream that closes before anything else was said.
 *
 * Partial lines are kept as pieces and joined once, so a megabyte `data:` line arriving in
 * many chunks costs one copy, not one per chunk. What one event may hold (its data so far and
 * the line being read) is bounded by `maxEventLength`: a server that never ends an event must
 * not grow memory without bound.
 */
export class SseParser {
  /** The id of the last complete event, which is what a resumption names in Last-Event-ID. */
  lastEventId: string | undefined;

  private pieces: string[] = [];
  private atStart = true;
  /** The previous chunk ended with CR: an LF opening this one belongs to it. */
  private pendingCr = false;
  private data: string | undefined;
  private type = '';
  private idField: string | undefined;
  /** Characters held in `pieces`. */
  private held = 0;
  private overflowed = false;

  constructor(
    private readonly handlers: SseHandlers,
    lastEventId?: string,
    private readonly maxEventLength = Infinity,
  ) {
    this.lastEventId = lastEventId;
    this.idField = lastEventId;
  }

  push(chunk: string): void {
    if (this.overflowed) return;
    let start = 0;
    if (this.atStart && chunk.length > 0) {
      this.atStart = false;
      if (chunk.charCodeAt(0) === BOM) start = 1;
    }
    if (this.pendingCr) {
      this.pendingCr = false;
      if (chunk.charCodeAt(start) === LF) start++;
    }
    // Most servers end lines with LF only; look for CR only when the chunk has one.
    let cr = chunk.indexOf('\r', start);
    while (start < chunk.length) {
      let end = chunk.indexOf('\n', start);
      if (cr !== -1 && cr < start) cr = chunk.indexOf('\r', start);
      if (cr !== -1 && (end === -1 || cr < end)) end = cr;
      if (end === -1) break;
      if (this.overflows(end - start)) return;
      let line = chunk.slice(start, end);
      if (this.pieces.length > 0) {
        this.pieces.push(line);
        line = this.pieces.join('');
        this.pieces = [];
        this.held = 0;
      }
      start = end + 1;
      if (end === cr) {
        if (start === chunk.length) this.pendingCr = true;
        else if (chunk.charCodeAt(start) === LF) start++;
      }
      this.line(line);
    }
    if (start < chunk.length && !this.overflows(chunk.length - start)) {
      this.pieces.push(chunk.slice(start));
      this.held += chunk.length - start;
    }
  }

  /** Whether the event being read, with `more` characters of its current line, is over the limit. */
  private overflows(more: number): boolean {
    const length = (this.data?.length ?? 0) + this.held + more;
    if (length <= this.maxEventLength) return false;
    this.overflowed = true;
    this.pieces = [];
    this.data = undefined;
    this.handlers.overflow?.(length);
    return true;
  }

  private line(line: string): void {
    if (line.length === 0) return this.dispatch();
    const colon = line.indexOf(':');
    if (colon === 0) return; // a comment (keep-alives are sent this way)
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = '';
    if (colon !== -1) value = line.slice(line.charCodeAt(colon + 1) === SPACE ? colon + 2 : colon + 1);
    switch (field) {
      case 'data':
        this.data = this.data === undefined ? value : `${this.data}\n${value}`;
        break;
      case 'event':
        this.type = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.idField = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.handlers.retry?.(Number(value));
        break;
      default:
        break; // unknown fields are ignored
    }
  }

  private dispatch(): void {
    // An empty id field resets the id (the standard's rule); there is then nothing to resume from.
    this.lastEventId = this.idField === '' ? undefined : this.idField;
    const { data, type } = this;
    this.data = undefined;
    this.type = '';
    if (data) this.handlers.event(data, type);
  }
}
