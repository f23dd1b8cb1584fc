// Due times of delayed keys in a binary min-heap, so the work queue arms one timer for the nearest
// deadline however many objects wait. A key keeps only its earliest due time; superseded heap
// entries are dropped lazily when they reach the top.

interface Entry {
  key: string;
  due: number;
}

export class DeadlineHeap {
  readonly #heap: Entry[] = [];
  /** key → its current (earliest) due time; heap entries that disagree are stale. */
  readonly #due = new Map<string, number>();

  get size(): number {
    return this.#due.size;
  }

  dueOf(key: string): number | undefined {
    return this.#due.get(key);
  }

  /** Records `due` for `key` unless an earlier one is already recorded. Returns whether it changed. */
  push(key: string, due: number): boolean {
    const current = this.#due.get(key);
    if (current !== undefined && current <= due) return false;
    this.#due.set(key, due);
    this.#heap.push({ key, due });
    this.#up(this.#heap.length - 1);
    return true;
  }

  /** The earliest due time, or undefined when nothing waits. */
  peek(): number | undefined {
    this.#dropStale();
    return this.#heap[0]?.due;
  }

  /** Removes and returns every key due at or before `now`, earliest first. */
  popDue(now: number): string[] {
    const out: string[] = [];
    for (;;) {
      this.#dropStale();
      const top = this.#heap[0];
      if (!top || top.due > now) return out;
      this.#pop();
      this.#due.delete(top.key);
      out.push(top.key);
    }
  }

  clear(): void {
    this.#heap.length = 0;
    this.#due.clear();
  }

  #dropStale(): void {
    while (this.#heap.length && this.#due.get(this.#heap[0]!.key) !== this.#heap[0]!.due) this.#pop();
  }

  #pop(): void {
    const last = this.#heap.pop()!;
    if (this.#heap.length === 0) return;
    this.#heap[0] = last;
    this.#down(0);
  }

  #up(i: number): void {
    const h = this.#heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (h[parent]!.due <= h[i]!.due) return;
      [h[parent], h[i]] = [h[i]!, h[parent]!];
      i = parent;
    }
  }

  #down(i: number): void {
    const h = this.#heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      if (l < h.length && h[l]!.due < h[min]!.due) min = l;
      if (r < h.length && h[r]!.due < h[min]!.due) min = r;
      if (min === i) return;
      [h[min], h[i]] = [h[i]!, h[min]!];
      i = min;
    }
  }
}
