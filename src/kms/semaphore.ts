/** A counting semaphore: at most `limit` tasks run at once, the rest wait in order. */
export class Semaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  /** Whether a slot is free now (a synchronous call may use it without taking it: nothing else runs meanwhile). */
  get free(): boolean {
    return this.active < this.limit;
  }

  /** Run `fn` when a slot is free (a free slot costs no promise turn: this is on every HSM call). */
  run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active < this.limit) {
      this.active++;
      return this.exec(fn);
    }
    return new Promise<void>((r) => this.waiting.push(r)).then(() => this.exec(fn));
  }

  private exec<T>(fn: () => Promise<T>): Promise<T> {
    let p: Promise<T>;
    try {
      p = fn();
    } catch (e) {
      this.release();
      return Promise.reject(e);
    }
    return p.then(
      (v) => {
        this.release();
        return v;
      },
      (e: unknown) => {
        this.release();
        throw e;
      },
    );
  }

  /** Hand the slot to the next waiter, or free it. */
  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }
}
