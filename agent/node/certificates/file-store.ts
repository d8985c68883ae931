// The certificate store of a certificate manager: `<prefix>-<timestamp>.pem` files in a directory and the `<prefix>-current.pem` link to the one in use.

import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { combinedPem, parsePair, splitCombinedPem, type CertKeyPair } from './pem.js'

export interface CertificateStore {
  /** The `-current.pem` path, which connection files name (kubelet-client-current.pem's counterpart). */
  readonly currentPath: string
  /**
   * The pair in use: the `-current.pem` file when it exists and parses, else the initial pair (files or PEM given at
   * construction); undefined when there is neither. Expired pairs are returned too: the manager decides.
   */
  current(): CertKeyPair | undefined
  /** Writes a new timestamped file (mode 0600) and points `-current.pem` at it atomically; returns the stored pair. */
  update(certPem: string, keyPem: string): CertKeyPair
}

export interface FileStoreOptions {
  dir: string
  /** `orchlet-client` or `orchlet-server`. */
  prefix: string
  /** Used while no `-current.pem` exists (the connection file's own pair, or --tls-cert-file/--tls-private-key-file). */
  initial?: { certPem: string; keyPem: string } | { certFile: string; keyFile: string }
  now?: () => number
}

/** Go's "2006-01-02-15-04-05" layout, in UTC. */
function stamp (ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace(/[T:]/g, '-')
}

function readInitial (initial: FileStoreOptions['initial']): CertKeyPair | undefined {
  if (initial === undefined) return undefined
  try {
    if ('certPem' in initial) return parsePair(initial.certPem, initial.keyPem)
    if (!existsSync(initial.certFile) || !existsSync(initial.keyFile)) return undefined
    return parsePair(readFileSync(initial.certFile, 'utf8'), readFileSync(initial.keyFile, 'utf8'))
  } catch {
    return undefined
  }
}

export function createFileStore (o: FileStoreOptions): CertificateStore {
  const dir = resolve(o.dir)
  const now = o.now ?? Date.now
  const currentPath = join(dir, `${o.prefix}-current.pem`)

  function readCurrent (): CertKeyPair | undefined {
    if (!existsSync(currentPath)) return undefined
    try {
      const { certPem, keyPem } = splitCombinedPem(readFileSync(currentPath, 'utf8'))
      return parsePair(certPem, keyPem)
    } catch {
      return undefined
    }
  }

  /** Points `-current.pem` at `target`: a fresh `-updated.pem` link renamed over it, so readers never see no link. */
  function link (target: string): void {
    const updated = join(dir, `${o.prefix}-updated.pem`)
    rmSync(updated, { force: true })
    symlinkSync(target, updated)
    // A regular file left where the link goes (copied by hand) is replaced as well.
    if (existsSync(currentPath) && !lstatSync(currentPath).isSymbolicLink()) rmSync(currentPath)
    renameSync(updated, currentPath)
  }

  return {
    currentPath,
    current: () => readCurrent() ?? readInitial(o.initial),
    update (certPem, keyPem) {
      const pair = parsePair(certPem, keyPem)
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      let file = join(dir, `${o.prefix}-${stamp(now())}.pem`)
      for (let n = 1; existsSync(file); n++) file = join(dir, `${o.prefix}-${stamp(now())}.${n}.pem`)
      const tmp = `${file}.tmp`
      writeFileSync(tmp, combinedPem(certPem, keyPem), { mode: 0o600 })
      renameSync(tmp, file)
      link(file)
      return pair
    }
  }
}
