// Derives orch's built-in structural schemas (builtin/definitions.json) from the Kubernetes v1.29 swagger document.
//
// Run from the repository root: `npx tsx apiserver/schema/derive/derive-builtin.ts [swagger.json] [out.json]`.
// Contract of the output: one JSON object mapping orch definition names (`io.orch.api.core.v1.PodSpec`)
// to structural schemas whose `$ref`s are bare orch names. Descriptions are not carried. Names become
// orch's: `io.k8s.` -> `io.orch.`, `*.k8s.io` groups -> `*.orch.io`, `x-kubernetes-*` -> `x-orch-*`.
// Every definition is kept (about 600, a few hundred KiB), so a new kind needs only a catalog entry.
import { readFileSync, writeFileSync } from 'node:fs'
import { gunzipSync } from 'node:zlib'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

type Json = Record<string, unknown>

const here = dirname(fileURLToPath(import.meta.url))
/** The swagger document, structure only (descriptions removed), carried in the repository. */
export const referenceDocument = resolve(here, 'openapi-v1.29/swagger.json.gz')
const defaultOut = resolve(here, '../builtin/definitions.json')

/** Reads a swagger document, gzipped (`.gz`) or not. */
export function readSwagger (path: string): { definitions: Record<string, Json> } {
  const bytes = readFileSync(path)
  const text = path.endsWith('.gz') ? gunzipSync(bytes).toString('utf8') : bytes.toString('utf8')
  return JSON.parse(text) as { definitions: Record<string, Json> }
}

/** Kubernetes definition name -> orch definition name. */
export function orchName(k8sName: string): string {
  return k8sName.replace(/^io\.k8s\./, 'io.orch.')
}

/** Kubernetes API group -> orch API group (`coordination.k8s.io` -> `coordination.orch.io`). */
export function orchGroup(group: string): string {
  return group.replace(/(^|\.)k8s\.io$/, '$1orch.io')
}

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.'
const EXT = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.'
const anyValue = (): Json => ({ 'x-orch-preserve-unknown-fields': true })

/** Types whose Go marshalling swagger 2 cannot say; replaced by their structural forms. */
const special: Record<string, () => Json> = {
  'io.k8s.apimachinery.pkg.api.resource.Quantity': () => ({ 'x-orch-int-or-string': true, format: 'quantity' }),
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': () => ({ 'x-orch-int-or-string': true }),
  [META + 'Time']: () => ({ type: 'string', format: 'date-time', nullable: true }),
  [META + 'MicroTime']: () => ({ type: 'string', format: 'date-time', nullable: true }),
  [META + 'FieldsV1']: () => ({ type: 'object', 'x-orch-preserve-unknown-fields': true }),
  'io.k8s.apimachinery.pkg.runtime.RawExtension': () => ({
    type: 'object', 'x-orch-preserve-unknown-fields': true, 'x-orch-embedded-resource': false,
  }),
  [EXT + 'JSON']: anyValue,
  [EXT + 'JSONSchemaPropsOrArray']: anyValue,
  [EXT + 'JSONSchemaPropsOrBool']: anyValue,
  [EXT + 'JSONSchemaPropsOrStringArray']: anyValue,
}

/** Schema keywords copied as they are (descriptions and unions are dropped). */
const plainKeys = new Set([
  'type', 'format', 'required', 'enum', 'default', 'nullable', 'pattern', 'minLength', 'maxLength',
  'minItems', 'maxItems', 'minProperties', 'maxProperties', 'minimum', 'maximum', 'exclusiveMinimum',
  'exclusiveMaximum', 'multipleOf', 'uniqueItems',
])

const refMarkers = ['x-kubernetes-patch-strategy', 'x-kubernetes-patch-merge-key', 'x-kubernetes-map-type']

function convertNode(node: Json): Json {
  if (typeof node.$ref === 'string') {
    // Patch markers on a reference (DeploymentSpec.strategy: retainKeys, PDB selector: replace) belong to the field.
    const out: Json = { $ref: orchName(node.$ref.replace('#/definitions/', '')) }
    for (const key of refMarkers) if (node[key] !== undefined) out[key.replace('x-kubernetes-', 'x-orch-')] = node[key]
    return out
  }
  const out: Json = {}
  for (const [key, value] of Object.entries(node)) {
    if (plainKeys.has(key)) out[key] = value
    else if (key === 'properties') {
      const props: Json = {}
      for (const [name, sub] of Object.entries(value as Record<string, Json>)) props[name] = convertNode(sub)
      out.properties = props
    } else if (key === 'items' || key === 'not') out[key] = convertNode(value as Json)
    else if (key === 'additionalProperties') {
      out[key] = typeof value === 'boolean' ? value : convertNode(value as Json)
    } else if (key === 'allOf' || key === 'anyOf' || key === 'oneOf') {
      out[key] = (value as Json[]).map(convertNode)
    } else if (key === 'x-kubernetes-group-version-kind') {
      out['x-orch-group-version-kind'] = (value as Json[]).map((g) => ({ ...g, group: orchGroup(String(g.group)) }))
    } else if (key === 'x-kubernetes-unions') continue
    else if (key.startsWith('x-kubernetes-')) out[key.replace('x-kubernetes-', 'x-orch-')] = value
  }
  if (out.format === 'int-or-string') {
    delete out.format
    delete out.type
    out['x-orch-int-or-string'] = true
  }
  return out
}

/**
 * JSONSchemaProps (a CRD's openAPIV3Schema) names its markers as fields; orch spells them `x-orch-*`
 * and also accepts the Kubernetes spelling, so both are declared.
 */
function addMarkerAliases(defs: Record<string, Json>): void {
  const props = defs[orchName(EXT + 'JSONSchemaProps')]?.properties as Record<string, Json> | undefined
  if (!props) return
  for (const name of Object.keys(props)) {
    if (name.startsWith('x-orch-')) props[name.replace('x-orch-', 'x-kubernetes-')] = props[name]
  }
}

function renameMarkerFields(node: Json): Json {
  const props = node.properties as Record<string, Json> | undefined
  if (!props) return node
  const renamed: Json = {}
  for (const [name, sub] of Object.entries(props)) renamed[name.replace(/^x-kubernetes-/, 'x-orch-')] = sub
  return { ...node, properties: renamed }
}

export function deriveDefinitions(swagger: { definitions: Record<string, Json> }): Record<string, Json> {
  const out: Record<string, Json> = {}
  for (const name of Object.keys(swagger.definitions).sort()) {
    const make = special[name]
    let node = make ? make() : convertNode(swagger.definitions[name])
    if (name === EXT + 'JSONSchemaProps') node = renameMarkerFields(node)
    out[orchName(name)] = node
  }
  addMarkerAliases(out)
  return out
}

function main(): void {
  const input = process.argv[2] ?? referenceDocument
  const output = process.argv[3] ?? defaultOut
  const swagger = readSwagger(input)
  const defs = deriveDefinitions(swagger)
  // One definition per line: diffs stay readable, the file stays compact.
  const lines = Object.entries(defs).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)
  writeFileSync(output, `{\n${lines.join(',\n')}\n}\n`)
  process.stdout.write(`wrote ${lines.length} definitions to ${output}\n`)
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main()
