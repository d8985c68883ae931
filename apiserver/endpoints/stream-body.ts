// Streaming an upstream body (an orchlet's logs, a proxied answer) to the client with back-pressure.

import type { ServerResponse } from 'node:http'
import type { Readable } from 'node:stream'

/**
 * Writes `body` to `res` as it arrives, pausing while the client is slow, and ends the response when the body ends or
 * breaks (what was sent stays sent); `onClose` (the caller's abort on client disconnect) is removed at the end.
 */
export async function streamBody (body: Readable, res: ServerResponse, onClose: () => void): Promise<void> {
  try {
    for await (const chunk of body) {
      // Honour back-pressure: a slow reader pauses the upstream instead of growing memory.
      if (!res.write(chunk as Buffer)) await new Promise(resolve => { res.once('drain', resolve); res.once('close', resolve) })
      if (res.destroyed) break
    }
    res.end()
  } catch {
    // The upstream went away mid-stream or the client disconnected: end what was sent.
    if (!res.destroyed) res.end()
  } finally {
    res.off('close', onClose)
    if (!body.destroyed) body.destroy()
  }
}
