/** LineParts made so far. */
let made = 0;

/**
 * The constant text of a record's line around its values: for a transition, ` ===>Tran Obj=`,
 * `,Sig=`, `,State=` and `->` around the object, the signal and the two states. A parser names
 * its line once, as parts and values, and each decoder renders it its own way: the string
 * formatter joins them (`join`), `tracehub decode`'s byte writer writes them one after the
 * other into its output, with no string made for the line (QsTextRecordDecoder).
 *
 * Up to six parts around up to five values: part i comes before value i, the sixth after the
 * last; parts and values not given are empty.
 */
export class LineParts {
  /** A number of its own, for hashing (QsTextRecordDecoder's cache of lines). */
  readonly id: number;
  readonly p0: string;
  readonly p1: string;
  readonly p2: string;
  readonly p3: string;
  readonly p4: string;
  readonly p5: string;
  /** Characters of all parts: with the values', the room a line needs. */
  readonly length: number;

  constructor(p0: string, p1 = '', p2 = '', p3 = '', p4 = '', p5 = '') {
    this.id = made++;
    this.p0 = flat(p0);
    this.p1 = flat(p1);
    this.p2 = flat(p2);
    this.p3 = flat(p3);
    this.p4 = flat(p4);
    this.p5 = flat(p5);
    this.length = p0.length + p1.length + p2.length + p3.length + p4.length + p5.length;
  }

  /** The line's text (after its timestamp) with `v0`..`v4` between the parts. */
  join(v0: string, v1: string, v2: string, v3: string, v4: string): string {
    return this.p0 + v0 + this.p1 + v1 + this.p2 + v2 + this.p3 + v3 + this.p4 + v4 + this.p5;
  }
}

/**
 * `s` as one string of its own characters: a part made with `${NO_TS}...` is a rope of its
 * pieces, and `tracehub decode` reads every part's characters for every line it writes
 * (QsTextRecordDecoder's writeParts). The parts are Latin-1, as QSPY's text is.
 */
function flat(s: string): string {
  return s.length < 2 ? s : Buffer.from(s, 'latin1').toString('latin1');
}
