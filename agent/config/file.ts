// OrchletConfiguration files: the --config file and --config-dir drop-ins, strictly decoded and merged field by field.

import { readFile as fsReadFile, readdir } from 'node:fs/promises'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { parseDocument } from 'yaml'
import { invalidFile, ValueError } from './errors.js'
import { path as pathKind } from './kinds.js'
import { SETTINGS, type SettingSpec } from './settings.js'

export const CONFIG_API_VERSION = 'orchlet.config.orch.io/v1beta1'
export const CONFIG_KIND = 'OrchletConfiguration'

export type ReadFile = (file: string) => Promise<string>

type Json = Record<string, unknown>

const FIELDS = new Map<string, SettingSpec>(SETTINGS.filter(o => o.field !== undefined).map(o => [o.field as string, o]))
const STRUCTS = new Set<string>([...FIELDS.keys()].flatMap(f => f.split('.').slice(0, -1).map((_, i, a) => a.slice(0, i + 1).join('.'))))

function isObject (x: unknown): x is Json {
  return x !== null && typeof x === 'object' && !Array.isArray(x)
}

/** Reads and parses one file; YAML (a superset of JSON). */
async function readDoc (file: string, read: ReadFile): Promise<Json> {
  let text: string
  try {
    text = await read(file)
  } catch (err) {
    throw invalidFile(file, undefined, `cannot read it: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  const doc = parseDocument(text, { uniqueKeys: true })
  if (doc.errors.length > 0) throw invalidFile(file, undefined, `not valid YAML or JSON: ${doc.errors[0].message.split('\n')[0].replace(/:$/, '')}`)
  const data: unknown = doc.toJS()
  if (!isObject(data)) throw invalidFile(file, undefined, `expected an ${CONFIG_KIND} object`)
  if (data.kind !== CONFIG_KIND) throw invalidFile(file, 'kind', `must be ${CONFIG_KIND}, got ${JSON.stringify(data.kind ?? null)}`)
  if (data.apiVersion !== CONFIG_API_VERSION) throw invalidFile(file, 'apiVersion', `must be ${CONFIG_API_VERSION}, got ${JSON.stringify(data.apiVersion ?? null)}`)
  return data
}

/** Rejects unknown fields and values of the wrong type, naming the field; relative paths resolve against the file's directory. */
function checkDoc (file: string, data: Json, prefix = ''): void {
  for (const [key, value] of Object.entries(data)) {
    const field = prefix === '' ? key : `${prefix}.${key}`
    if (prefix === '' && (key === 'kind' || key === 'apiVersion')) continue
    if (value === null) continue
    const opt = FIELDS.get(field)
    if (opt !== undefined) {
      try {
        const decoded = opt.kind.file(value)
        if (opt.kind === pathKind && typeof decoded === 'string' && decoded !== '' && !isAbsolute(decoded)) data[key] = resolve(dirname(file), decoded)
      } catch (err) {
        if (err instanceof ValueError) throw invalidFile(file, field, err.message)
        throw err
      }
    } else if (STRUCTS.has(field)) {
      if (!isObject(value)) throw invalidFile(file, field, 'expected an object')
      checkDoc(file, value, field)
    } else {
      throw invalidFile(file, field, 'unknown field')
    }
  }
}

/** Objects merge key by key; lists and scalars from `over` replace. */
export function mergeConfig (base: Json, over: Json): Json {
  const out: Json = { ...base }
  for (const [key, value] of Object.entries(over)) {
    if (value === null) continue
    out[key] = isObject(value) && isObject(out[key]) ? mergeConfig(out[key] as Json, value) : value
  }
  return out
}

async function dropIns (dir: string): Promise<string[]> {
  let names: string[]
  try {
    names = (await readdir(dir, { withFileTypes: true })).filter(e => e.isFile() && e.name.endsWith('.conf')).map(e => e.name)
  } catch (err) {
    throw invalidFile(dir, undefined, `cannot read the drop-in directory: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  return names.sort().map(n => join(dir, n))
}

/**
 * Loads the base file (if any) and the drop-ins of `dropInDir` (if any) in lexical order, merged over it.
 * Returns the decoded value of every field set, by setting.
 */
export async function loadConfigFiles (configFile: string | undefined, dropInDir: string | undefined, read: ReadFile = f => fsReadFile(f, 'utf8'),
  origins: Map<SettingSpec, string> = new Map()): Promise<Map<SettingSpec, unknown>> {
  const files = [...(configFile === undefined || configFile === '' ? [] : [configFile]), ...(dropInDir === undefined || dropInDir === '' ? [] : await dropIns(dropInDir))]
  let merged: Json = {}
  for (const file of files) {
    const doc = await readDoc(file, read)
    checkDoc(file, doc)
    merged = mergeConfig(merged, doc)
    // The last file to set a field is where its value came from.
    for (const [field, opt] of FIELDS) {
      let node: unknown = doc
      for (const part of field.split('.')) node = isObject(node) ? node[part] : undefined
      if (node !== undefined && node !== null) origins.set(opt, file)
    }
  }
  const out = new Map<SettingSpec, unknown>()
  for (const [field, opt] of FIELDS) {
    let node: unknown = merged
    for (const part of field.split('.')) node = isObject(node) ? node[part] : undefined
    if (node !== undefined && node !== null) out.set(opt, opt.kind.file(node))
  }
  return out
}
