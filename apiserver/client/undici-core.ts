// undici's dispatchers (Pool, Agent, Client, ProxyAgent), its error classes and its request API, without undici's index.
//
// Why: undici's index loads every part of the package (fetch, WebSocket, EventSource, cookies, the cache stores, the
// mocks) and, through `globalThis.Headers` in its cookies module, Node's own bundled copy of undici as well: some
// 3 MiB of heap in an `orch up` that idles on a Pool to its own API server. Here only the dispatcher modules load;
// `request` and `fetch` load the full index on their first call (some 30-60 ms once) and are undici's own functions.
//
// Contract: every value exported here is the object undici's index exports (same module instances, so `instanceof`
// and the error classes agree with code importing 'undici' directly); undici-core.test.ts checks it.

import { createRequire } from 'node:module'
import type * as Undici from 'undici'

const load = createRequire(import.meta.url)

const Dispatcher = load('undici/lib/dispatcher/dispatcher') as typeof Undici.Dispatcher
// What undici's index does on load: the request API (request, stream, pipeline, upgrade, connect) on every dispatcher.
// Assigning the same functions again when the index loads later changes nothing.
Object.assign(Dispatcher.prototype, load('undici/lib/api'))

export const Pool = load('undici/lib/dispatcher/pool') as typeof Undici.Pool
export const Agent = load('undici/lib/dispatcher/agent') as typeof Undici.Agent
export const Client = load('undici/lib/dispatcher/client') as typeof Undici.Client
export const ProxyAgent = load('undici/lib/dispatcher/proxy-agent') as typeof Undici.ProxyAgent
export const errors = load('undici/lib/core/errors') as typeof Undici.errors
// The instance types under the same names, as `import { Pool } from 'undici'` gives both.
export type Pool = Undici.Pool
export type Agent = Undici.Agent
export type Client = Undici.Client
export type ProxyAgent = Undici.ProxyAgent

let full: Promise<typeof Undici> | undefined
/** undici's index, imported once on first need. */
async function undici (): Promise<typeof Undici> {
  full ??= import('undici')
  return await full
}

/** undici.request (the global dispatcher unless `options.dispatcher`), undici's index loaded on the first call. */
export const request = (async (url, options) => await (await undici()).request(url, options)) as typeof Undici.request

/** undici.fetch, undici's index loaded on the first call. */
export const fetch = (async (input, init) => await (await undici()).fetch(input, init)) as typeof Undici.fetch
