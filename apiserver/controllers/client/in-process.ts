// The in-process transport: controllers inside `orch up` call the registry directly, with no HTTP and no re-encoding.

import { notFound, pathNotFound } from '../../errors/status-error.js'
import { internalContext } from '../../registry/internal-context.js'
import { applyMergePatch } from '../../registry/patch/merge-patch.js'
import type { ApiWatchEvent, Registry, RequestContext, ResourceHandler } from '../../registry/types.js'
import type { ApiClient, Obj, Resource, ResourceClient, WatchEventType } from './types.js'

const parse = (bytes: Buffer): Obj => JSON.parse(bytes.toString('utf8')) as Obj

export function inProcessClient (registry: Registry, userAgent: string, username = `system:${userAgent}`): ApiClient {
  let watchers = 0
  const context = (): RequestContext => internalContext(username, userAgent)

  const handlerOf = (r: Resource): ResourceHandler => {
    const h = registry.handler(r.group, r.version, r.resource)
    if (h === undefined) throw pathNotFound(`the server could not find the requested resource (${r.resource}.${r.group})`)
    return h
  }

  const resource = (r: Resource): ResourceClient => ({
    async get (namespace, name, subresource) {
      try {
        const got = await handlerOf(r).get(context(), namespace, name, {}, subresource)
        return parse(Buffer.isBuffer(got) ? got : got.bytes)
      } catch (err) {
        if ((err as { code?: number }).code === 404) return undefined
        throw err
      }
    },
    async list (namespace, opts = {}) {
      const got = await handlerOf(r).list(context(), namespace, opts)
      return { items: got.items.map(parse), resourceVersion: got.resourceVersion, continue: got.continue }
    },
    async watch (namespace, opts, handlers) {
      // A key of its own per watcher, so the hub calls `encode` once per event for this watcher alone.
      const key = `in-process:${++watchers}`
      const pending: Array<{ type: WatchEventType, object: Obj }> = []
      const empty = Buffer.alloc(0)
      const encoder = {
        key,
        encode (e: ApiWatchEvent): Buffer {
          pending.push({ type: e.type, object: e.object() as Obj })
          return empty
        }
      }
      let ended = false
      const sub = await handlerOf(r).watch(context(), namespace,
        { ...opts, allowWatchBookmarks: true }, encoder, {
          write () { for (const e of pending.splice(0)) if (!ended) handlers.event(e.type, e.object) },
          end (err) {
            for (const e of pending.splice(0)) if (!ended) handlers.event(e.type, e.object)
            if (ended) return
            ended = true
            handlers.end(err)
          }
        })
      return {
        stop () {
          if (ended) return
          ended = true
          sub.stop()
          handlers.end()
        }
      }
    },
    async create (namespace, object) {
      return parse((await handlerOf(r).create(context(), namespace, { object: structuredClone(object), duplicateFields: [] })).bytes)
    },
    async update (namespace, object, subresource) {
      const name = String(object.metadata?.name ?? '')
      return parse((await handlerOf(r).update(context(), namespace, name, { object: structuredClone(object), duplicateFields: [] }, subresource)).bytes)
    },
    async patch (namespace, name, patch, subresource) {
      const apply = (current: Record<string, unknown>): Record<string, unknown> => applyMergePatch(current as never, patch as never) as Record<string, unknown>
      return parse((await handlerOf(r).patch(context(), namespace, name, apply, subresource)).bytes)
    },
    async delete (namespace, name, opts = {}) {
      await handlerOf(r).delete(context(), namespace, name, opts)
    },
    async createSubresource (namespace, name, subresource, body) {
      const sub = registry.subresource(r.group, r.version, r.resource, subresource)
      if (sub === undefined) throw notFound({ group: r.group, resource: `${r.resource}/${subresource}` }, name)
      return (await sub.create(context(), namespace, name, { object: structuredClone(body), duplicateFields: [] })).object as Obj
    }
  })
  return { userAgent, resource }
}
