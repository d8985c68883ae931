// `orch admin token create [--ttl 24h] [--groups G1,G2] [--description TEXT]`: a bootstrap token, stored as a
// bootstrap.kubernetes.io/token Secret in kube-system through the API (the admin kubeconfig), printed on stdout
// as `kubeadm token create` prints it.

import { randomInt } from 'node:crypto'
import { join } from 'node:path'
import { loadKubeconfig } from '../client/kubeconfig.js'
import { httpClient } from '../controllers/client/http.js'
import { RESOURCES } from '../controllers/client/types.js'
import {
  BOOTSTRAP_GROUP_PATTERN, BOOTSTRAP_TOKEN_NAMESPACE, BOOTSTRAP_TOKEN_SECRET_PREFIX, BOOTSTRAP_TOKEN_SECRET_TYPE
} from '../auth/bootstrap-tokens.js'
import { flagHelp, parseDuration, parseFlags, UsageError, type FlagSpec } from './args.js'

export interface CliIo { out(text: string): void; err(text: string): void }

/** The group kubeadm gives node join tokens, under orch's name. */
export const DEFAULT_TOKEN_GROUP = 'system:bootstrappers:orch:default-node-token'

export const TOKEN_CREATE_FLAGS: FlagSpec[] = [
  { name: 'data-dir', kind: 'string', help: 'data directory whose kubeconfig is used unless --kubeconfig is given', default: './.orch' },
  { name: 'kubeconfig', kind: 'string', help: 'kubeconfig of an administrator (default: DIR/kubeconfig)' },
  { name: 'ttl', kind: 'duration', help: 'how long the token is valid; 0 for ever', default: '24h' },
  { name: 'groups', kind: 'string', help: 'extra groups of the token\'s user (comma-separated, each system:bootstrappers:...)', default: DEFAULT_TOKEN_GROUP },
  { name: 'description', kind: 'string', help: 'a human description of the token' }
]

export const TOKEN_USAGE = `Usage: orch admin token create [flags]\n\n${flagHelp(TOKEN_CREATE_FLAGS)}\n`

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'
const randomText = (n: number): string => Array.from({ length: n }, () => ALPHABET[randomInt(ALPHABET.length)]).join('')

/** A fresh `[a-z0-9]{6}.[a-z0-9]{16}` token. */
export function generateBootstrapToken (): { id: string, secret: string, token: string } {
  const id = randomText(6)
  const secret = randomText(16)
  return { id, secret, token: `${id}.${secret}` }
}

/** The Secret backing `token` (data as stringData; the API server encodes it). */
export function bootstrapTokenSecret (id: string, secret: string, o: { expiresAt?: Date, groups: string[], description?: string }): Record<string, unknown> {
  const stringData: Record<string, string> = {
    'token-id': id,
    'token-secret': secret,
    'usage-bootstrap-authentication': 'true',
    'usage-bootstrap-signing': 'true'
  }
  if (o.expiresAt !== undefined) stringData.expiration = o.expiresAt.toISOString().replace(/\.\d{3}Z$/, 'Z')
  if (o.groups.length > 0) stringData['auth-extra-groups'] = o.groups.join(',')
  if (o.description !== undefined) stringData.description = o.description
  return {
    apiVersion: 'v1', kind: 'Secret', type: BOOTSTRAP_TOKEN_SECRET_TYPE,
    metadata: { name: BOOTSTRAP_TOKEN_SECRET_PREFIX + id, namespace: BOOTSTRAP_TOKEN_NAMESPACE },
    stringData
  }
}

const GROUP = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/

/** `orch admin token ...` (args after `token`). Returns the exit code; usage errors are thrown as UsageError. */
export async function tokenCommand (args: string[], io: CliIo, now: () => number = Date.now): Promise<number> {
  const [sub, ...rest] = args
  if (sub !== 'create') throw new UsageError(sub === undefined ? 'orch admin token needs a command: create' : `unknown token command "${sub}"`)
  const { flags, rest: extra } = parseFlags(rest, [...TOKEN_CREATE_FLAGS, { name: 'help', kind: 'bool', help: 'show help' }])
  if (flags.help === true) { io.out(TOKEN_USAGE); return 0 }
  if (extra.length > 0) throw new UsageError(`unexpected argument: ${extra[0]}`)
  const ttl = typeof flags.ttl === 'number' ? flags.ttl : parseDuration('ttl', String(flags.ttl))
  const groups = String(flags.groups ?? '').split(',').map(g => g.trim()).filter(g => g !== '')
  for (const g of groups) {
    if (!GROUP.test(g)) throw new UsageError(`--groups: bootstrap group ${JSON.stringify(g)} is invalid (must match ${BOOTSTRAP_GROUP_PATTERN})`)
  }
  const kubeconfig = (flags.kubeconfig as string | undefined) ?? join(flags['data-dir'] as string, 'kubeconfig')
  const client = httpClient({ connection: loadKubeconfig(kubeconfig), userAgent: 'orch-admin' })
  try {
    const t = generateBootstrapToken()
    const secret = bootstrapTokenSecret(t.id, t.secret, {
      expiresAt: ttl > 0 ? new Date(now() + ttl) : undefined, groups, description: flags.description as string | undefined
    })
    await client.resource(RESOURCES.secrets).create(BOOTSTRAP_TOKEN_NAMESPACE, secret)
    io.out(`${t.token}\n`)
    return 0
  } finally {
    await client.close()
  }
}
