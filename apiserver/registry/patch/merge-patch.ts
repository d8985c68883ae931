// JSON Merge Patch (RFC 7386): an object patch merges member by member, null removes, anything else replaces.

import { cloneJson, hasOwn, isObject, setOwn, type Json, type JsonObject } from './json-pointer.js'

/** The merge of `patch` into `target`; neither input is changed. */
export function applyMergePatch (target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return cloneJson(patch)
  const out: JsonObject = isObject(target) ? cloneJson(target) : {}
  mergeInto(out, patch)
  return out
}

function mergeInto (out: JsonObject, patch: JsonObject): void {
  for (const key of Object.keys(patch)) {
    const value = patch[key]
    if (value === null) { delete out[key]; continue }
    if (isObject(value)) {
      const cur = hasOwn(out, key) ? out[key] : undefined
      const next: JsonObject = isObject(cur) ? cur : {}
      mergeInto(next, value)
      setOwn(out, key, next)
      continue
    }
    setOwn(out, key, cloneJson(value))
  }
}
