// A view answer (columns) as a tree the table and the flame graph walk.

/** Children lists, names and value accessors over the columns of /api/run. */
export class ViewTree {
  constructor(answer) {
    this.answer = answer;
    this.kind = answer.kind;            // single | diff | aggregate
    this.n = answer.rows;
    this.parent = answer.parent;
    this.strings = answer.strings;
    this.attrs = answer.attrs;
    this.children = Array.from({length: this.n}, () => []);
    this.depth = new Int32Array(this.n);
    for (let i = 1; i < this.n; i++) {
      const p = this.parent[i];
      this.children[p].push(i);
      this.depth[i] = this.depth[p] + 1;
    }
  }

  name(i) {
    return this.strings[this.answer.name[i]];
  }

  /** The name shown for row i: the root is "total" where the profile's framework has no
   * _TFProfRoot (rootLabel set by the page), every other row its name. */
  shown(i) {
    return i === 0 && this.rootLabel ? this.rootLabel : this.name(i);
  }

  op(i) {
    return this.answer.op ? this.strings[this.answer.op[i]] : "";
  }

  /** The main value of a row for `attr` (total; the diff's new value; the aggregate). */
  total(attr, i) {
    return this.answer.total[attr][i];
  }

  self(attr, i) {
    return this.answer.self ? this.answer.self[attr][i] : 0;
  }

  base(attr, i) {
    return this.answer.base ? this.answer.base[attr][i] : 0;
  }

  delta(attr, i) {
    return this.total(attr, i) - this.base(attr, i);
  }

  status(i) {
    return this.answer.status ? this.answer.status[i] : "";
  }

  /** Each profile's value of `attr` at row i (aggregate), nulls where absent. */
  byProfile(attr, i) {
    return (this.answer.by_profile || []).map((cols) => cols[attr][i]);
  }

  /** The first row at or after `from` (in display order) whose name holds `query`. */
  find(query, from = 0, step = 1) {
    const q = query.toLowerCase();
    for (let k = 0; k < this.n; k++) {
      const i = ((from + k * step) % this.n + this.n) % this.n;
      if (this.name(i).toLowerCase().includes(q)) return i;
    }
    return -1;
  }

  /** Rows whose name holds `query` (case-insensitive). */
  matches(query) {
    const q = query.toLowerCase();
    const out = [];
    if (!q) return out;
    for (let i = 0; i < this.n; i++) if (this.name(i).toLowerCase().includes(q)) out.push(i);
    return out;
  }
}
