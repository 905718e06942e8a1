/** An async queue between a producer of messages (a thread's port) and a `for await` consumer. */
export class Channel<T> implements AsyncIterable<T> {
  readonly #items: T[] = []
  #waiting: ((result: IteratorResult<T>) => void) | undefined
  #rejecting: ((error: unknown) => void) | undefined
  #ended = false
  #failure: unknown
  #failed = false

  push(item: T): void {
    if (this.#waiting) this.#settle().resolve({ value: item, done: false })
    else this.#items.push(item)
  }

  end(): void {
    this.#ended = true
    if (this.#waiting) this.#settle().resolve({ value: undefined, done: true })
  }

  /** Ends the channel with an error: the consumer gets it after the items already queued. */
  fail(error: unknown): void {
    if (this.#failed || this.#ended) return
    this.#failed = true
    this.#failure = error
    if (this.#waiting) this.#settle().reject(error)
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    while (true) {
      const item = this.#items.shift()
      if (item !== undefined) {
        yield item
        continue
      }
      if (this.#failed) throw this.#failure
      if (this.#ended) return
      const next = await new Promise<IteratorResult<T>>((resolve, reject) => {
        this.#waiting = resolve
        this.#rejecting = reject
      })
      if (next.done) return
      yield next.value
    }
  }

  #settle(): { resolve: (result: IteratorResult<T>) => void; reject: (error: unknown) => void } {
    const resolve = this.#waiting!
    const reject = this.#rejecting!
    this.#waiting = undefined
    this.#rejecting = undefined
    return { resolve, reject }
  }
}
