// Test helpers of the controllers: polling until the system under test reaches a state.

/** Polls `f` every 20 ms until it returns something other than undefined or false; throws after `ms`. */
export async function until<T> (f: () => Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await f()
    if (v !== undefined && v !== false) return v
    if (Date.now() > end) throw new Error('timed out')
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}
