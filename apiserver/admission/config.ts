// --admission-control-config-file: an AdmissionConfiguration, decoded strictly, each plugin's configuration inline or
// read from its `path` (relative paths are relative to the file), for registered plugin names only.

import { readFile } from 'node:fs/promises'
import { dirname, isAbsolute, resolve } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { AdmissionOptionsError, isKnownPlugin } from './plugins.js'

const API_VERSIONS = ['apiserver.orch.io/v1alpha1', 'apiserver.config.k8s.io/v1', 'apiserver.config.k8s.io/v1alpha1']
const ENTRY_FIELDS = new Set(['name', 'path', 'configuration'])

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

function parseDoc (text: string, file: string): unknown {
  try {
    return parseYaml(text)
  } catch (err) {
    throw new AdmissionOptionsError(`failed to read admission control configuration from "${file}" [${(err as Error).message}]`)
  }
}

/** Plugin name to its configuration (undefined when the entry gives neither `path` nor `configuration`). */
export async function loadAdmissionConfig (file: string): Promise<Map<string, unknown>> {
  const fail = (why: string): never => { throw new AdmissionOptionsError(`failed to read admission control configuration from "${file}" [${why}]`) }
  let text: string
  try { text = await readFile(file, 'utf8') } catch (err) { return fail((err as Error).message) }
  const doc = parseDoc(text, file)
  if (!isRecord(doc)) return fail('the file does not hold an object')
  if (doc.kind !== 'AdmissionConfiguration' || typeof doc.apiVersion !== 'string' || !API_VERSIONS.includes(doc.apiVersion)) {
    return fail(`no kind "${String(doc.kind)}" is registered for version "${String(doc.apiVersion)}" in scheme`)
  }
  const unknown = Object.keys(doc).filter(k => !['apiVersion', 'kind', 'plugins'].includes(k)).map(k => `unknown field "${k}"`)
  const plugins = doc.plugins ?? []
  if (!Array.isArray(plugins)) return fail('strict decoding error: plugins must be a list')
  plugins.forEach((p, i) => {
    if (isRecord(p)) for (const k of Object.keys(p)) if (!ENTRY_FIELDS.has(k)) unknown.push(`unknown field "plugins[${i}].${k}"`)
  })
  if (unknown.length > 0) fail(`strict decoding error: ${unknown.join(', ')}`)
  const out = new Map<string, unknown>()
  for (const p of plugins) {
    if (!isRecord(p) || typeof p.name !== 'string' || p.name === '') return fail('every plugin entry needs a name')
    if (!isKnownPlugin(p.name)) return fail(`admission plugin "${p.name}" is not registered`)
    if (out.has(p.name)) return fail(`admission plugin "${p.name}" is configured twice`)
    if (p.configuration !== undefined && p.configuration !== null) { out.set(p.name, p.configuration); continue }
    if (typeof p.path === 'string' && p.path !== '') {
      const at = isAbsolute(p.path) ? p.path : resolve(dirname(file), p.path)
      let body: string
      try { body = await readFile(at, 'utf8') } catch (err) { return fail(`couldn't read config file "${at}" of plugin "${p.name}": ${(err as Error).message}`) }
      out.set(p.name, parseDoc(body, at))
      continue
    }
    out.set(p.name, undefined)
  }
  return out
}
