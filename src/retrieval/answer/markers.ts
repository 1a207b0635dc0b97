// Citation markers in an answer's text. The chunks given to the model are numbered [1]..[k]; a bracket group that
// looks like a citation ([3], [1, 2], [0], [9] when k is 5, [1a]) keeps only the numbers of chunks that were given,
// and anything else in it is dropped and counted as invented. The filter works on a stream: it holds back only what
// may still become a marker (an open bracket, the spaces before one), so deltas pass through as they come.

/** What a citation group holds: numbers or number-like tokens, separated by commas. */
const GROUP = /^\s*\d[\w.-]{0,7}(?:\s*,\s*\d[\w.-]{0,7})*\s*$/;
/** Longest bracket content that may still be a citation group. */
const MAX_GROUP = 32;
const MAY_BECOME = /^[\s\w.,-]*$/;

export class MarkerFilter {
  /** Markers kept, in order of first use. */
  readonly used: number[] = [];
  invented = 0;
  private pending = '';

  constructor(private readonly given: number) {}

  /** Text safe to show, from what came so far (a marker still open is held back). */
  push(text: string): string {
    this.pending += text;
    return this.drain(false);
  }

  /** The rest, at the end of the answer: an unclosed bracket is plain text. */
  end(): string {
    return this.drain(true);
  }

  private drain(final: boolean): string {
    let out = '';
    let s = this.pending;
    for (;;) {
      const open = s.search(/\s*\[/);
      if (open < 0) {
        // trailing spaces wait: a marker may follow them, and an invented one takes them along
        const keep = final ? s.length : s.search(/\s*$/);
        out += s.slice(0, keep);
        s = s.slice(keep);
        break;
      }
      const bracket = s.indexOf('[', open);
      out += s.slice(0, open);
      const spaces = s.slice(open, bracket);
      const close = s.indexOf(']', bracket);
      const inner = close < 0 ? s.slice(bracket + 1) : s.slice(bracket + 1, close);
      if (close < 0) {
        if (!final && inner.length <= MAX_GROUP && MAY_BECOME.test(inner)) {
          s = s.slice(open);
          break;
        }
        out += spaces + '[';
        s = s.slice(bracket + 1);
        continue;
      }
      if (!GROUP.test(inner)) {
        out += spaces + '[';
        s = s.slice(bracket + 1);
        continue;
      }
      const kept = this.keep(inner);
      out += kept.length > 0 ? spaces + kept.map((n) => `[${n}]`).join('') : '';
      s = s.slice(close + 1);
    }
    this.pending = s;
    return out;
  }

  private keep(inner: string): number[] {
    const kept: number[] = [];
    for (const token of inner.split(',').map((t) => t.trim())) {
      const n = /^\d+$/.test(token) ? Number(token) : NaN;
      if (Number.isInteger(n) && n >= 1 && n <= this.given) {
        if (!kept.includes(n)) kept.push(n);
        if (!this.used.includes(n)) this.used.push(n);
      } else {
        this.invented++;
      }
    }
    return kept;
  }
}

/** Text with every citation-like group removed (a document's own "[3]" must not read as one of the answer's). */
export function withoutMarkers(text: string): string {
  const filter = new MarkerFilter(0);
  return filter.push(text) + filter.end();
}
