// `orch kubeconfig --user NAME [--group G]... [--expiration 24h] [--output FILE]`: a kubeconfig for a new user with a
// client certificate from the cluster CA. With an administrator's kubeconfig it makes a key, submits a CSR to
// orch.io/orch-apiserver-client (CN=NAME, O=the groups), approves it, waits for csrsigning to issue the
// certificate, and writes a kubeconfig for the same cluster and CA (to stdout without --output).

import { writeFile, rename } from 'node:fs/promises'
import { join } from 'node:path'
import { stringify } from 'yaml'
import { loadKubeconfig, type Connection } from '../client/kubeconfig.js'
import { httpClient } from '../controllers/client/http.js'
import { RESOURCES, type ApiClient, type Obj } from '../controllers/client/types.js'
import { createCsr } from '../pki/csr.js'
import { flagHelp, parseDuration, parseFlags, UsageError, type FlagSpec } from './args.js'

export interface CliIo { out(text: string): void; err(text: string): void }

export const USER_KUBECONFIG_FLAGS: FlagSpec[] = [
  { name: 'user', kind: 'string', help: 'the user name (the certificate\'s common name)' },
  { name: 'group', kind: 'string', help: 'a group of the user (the certificate\'s organization); repeat for several' },
  { name: 'expiration', kind: 'duration', help: 'requested lifetime of the certificate (at least 10m; default and most: the signing duration, one year)' },
  { name: 'output', kind: 'string', help: 'file to write the kubeconfig to (mode 0600; default stdout)' },
  { name: 'data-dir', kind: 'string', help: 'data directory whose kubeconfig is used unless --kubeconfig is given', default: './.orch' },
  { name: 'kubeconfig', kind: 'string', help: 'kubeconfig of an administrator (default: DIR/kubeconfig)' },
  { name: 'timeout', kind: 'duration', help: 'how long to wait for the certificate', default: '30s' }
]

export const USER_KUBECONFIG_USAGE = `Usage: orch kubeconfig --user NAME [--group G]... [flags]\n\n${flagHelp(USER_KUBECONFIG_FLAGS)}\n`

const SIGNER = 'orch.io/orch-apiserver-client'

/** Takes every `--name V` / `--name=V` out of argv (parseFlags keeps only the last of a repeated flag). */
function takeRepeated (argv: string[], name: string): { values: string[], rest: string[] } {
  const values: string[] = []
  const rest: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === `--${name}`) {
      const v = argv[++i]
      if (v === undefined) throw new UsageError(`flag needs an argument: --${name}`)
      values.push(v)
    } else if (a.startsWith(`--${name}=`)) values.push(a.slice(name.length + 3))
    else rest.push(a)
  }
  return { values, rest }
}

export interface UserCertificateRequest { user: string, groups: string[], expirationSeconds?: number, timeoutMs: number }

/** Submits, approves and waits for a client certificate of `o.user`; resolves with the PEM certificate and key. */
export async function requestUserCertificate (client: ApiClient, o: UserCertificateRequest): Promise<{ certPem: string, keyPem: string }> {
  const { csrPem, keyPem } = await createCsr({ commonName: o.user, organizations: o.groups })
  const csrs = client.resource(RESOURCES.certificateSigningRequests)
  const spec: Obj = { request: Buffer.from(csrPem).toString('base64'), signerName: SIGNER, usages: ['digital signature', 'key encipherment', 'client auth'] }
  if (o.expirationSeconds !== undefined) spec.expirationSeconds = o.expirationSeconds
  const created = await csrs.create('', { apiVersion: 'certificates.orch.io/v1', kind: 'CertificateSigningRequest', metadata: { generateName: 'orch-kubeconfig-' }, spec })
  const name = String(created.metadata.name)
  created.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'OrchKubeconfigApprove', message: `This CSR was approved by orch kubeconfig for user ${o.user}.` }] }
  await csrs.update('', created, 'approval')
  const deadline = Date.now() + o.timeoutMs
  for (;;) {
    const cur = await csrs.get('', name)
    if (cur === undefined) throw new Error(`certificatesigningrequest ${name} disappeared before it was signed`)
    const failed = ((cur.status?.conditions ?? []) as Obj[]).find(c => c.type === 'Failed' || c.type === 'Denied')
    if (failed !== undefined) throw new Error(`certificatesigningrequest ${name} is ${String(failed.type)}: ${String(failed.message ?? failed.reason ?? '')}`)
    if (typeof cur.status?.certificate === 'string' && cur.status.certificate !== '') {
      return { certPem: Buffer.from(cur.status.certificate, 'base64').toString('utf8'), keyPem }
    }
    if (Date.now() > deadline) throw new Error(`certificatesigningrequest ${name} was approved but not signed within the timeout: is the csrsigning controller running with the cluster CA?`)
    await new Promise(resolve => setTimeout(resolve, 200))
  }
}

/** The user's kubeconfig: the admin's server and CA, cluster `orch`, user and context NAME. */
export function userKubeconfigYaml (conn: Connection, user: string, certPem: string, keyPem: string): string {
  const cluster: Record<string, unknown> = { server: conn.server }
  if (conn.caPem !== undefined) cluster['certificate-authority-data'] = conn.caPem.toString('base64')
  if (conn.insecureSkipTlsVerify) cluster['insecure-skip-tls-verify'] = true
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'orch', cluster }],
    users: [{ name: user, user: { 'client-certificate-data': Buffer.from(certPem).toString('base64'), 'client-key-data': Buffer.from(keyPem).toString('base64') } }],
    contexts: [{ name: user, context: { cluster: 'orch', user } }],
    'current-context': user,
    preferences: {}
  })
}

/** `orch kubeconfig ...` (args after `kubeconfig`). Returns the exit code; usage errors are thrown as UsageError. */
export async function userKubeconfigCommand (args: string[], io: CliIo): Promise<number> {
  const { values: groups, rest } = takeRepeated(args, 'group')
  const { flags, rest: extra } = parseFlags(rest, [...USER_KUBECONFIG_FLAGS, { name: 'help', kind: 'bool', help: 'show help' }])
  if (flags.help === true) { io.out(USER_KUBECONFIG_USAGE); return 0 }
  if (extra.length > 0) throw new UsageError(`unexpected argument: ${extra[0]}`)
  const user = flags.user as string | undefined
  if (user === undefined || user === '') throw new UsageError('--user is required')
  const expirationMs = flags.expiration as number | undefined
  if (expirationMs !== undefined && expirationMs < 600_000) throw new UsageError('--expiration must be at least 10m')
  const timeoutMs = typeof flags.timeout === 'number' ? flags.timeout : parseDuration('timeout', String(flags.timeout))
  const kubeconfig = (flags.kubeconfig as string | undefined) ?? join(flags['data-dir'] as string, 'kubeconfig')
  const conn = loadKubeconfig(kubeconfig)
  const client = httpClient({ connection: conn, userAgent: 'orch-kubeconfig' })
  try {
    const { certPem, keyPem } = await requestUserCertificate(client, {
      user, groups, timeoutMs, expirationSeconds: expirationMs === undefined ? undefined : Math.floor(expirationMs / 1000)
    })
    const text = userKubeconfigYaml(conn, user, certPem, keyPem)
    const output = flags.output as string | undefined
    if (output === undefined) io.out(text)
    else {
      const tmp = `${output}.${process.pid}.tmp`
      await writeFile(tmp, text, { mode: 0o600 })
      await rename(tmp, output)
      io.err(`wrote a kubeconfig for user ${user} to ${output}\n`)
    }
    return 0
  } finally {
    await client.close()
  }
}
