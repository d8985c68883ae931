// The node's CNI configuration: when the container runtime's CNI conf dir holds no network, the orchlet writes one
// (bridge with host-local IPAM over the pod CIDR, and portmap for hostPort), so pods that are not hostNetwork
// get an IP and the runtime's NetworkReady turns true.
//
// The loopback interface is not in the chain: containerd's CRI plugin sets up `lo` itself with its own loopback
// network (`cni-loopback`); the bridge then provides eth0.

import { mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { RuntimeService } from '../runtime/runtime.js'

/** containerd's own default pod range, used when neither --pod-cidr nor the node object gives one. */
export const DEFAULT_POD_CIDR = '10.88.0.0/16'
export const CONFLIST_NAME = '10-orch-bridge.conflist'

/** The conflist for a pod CIDR (IPv4 or IPv6; the default route matches the family). */
export function bridgeConflist (podCIDR: string): Record<string, unknown> {
  const v6 = podCIDR.includes(':')
  return {
    cniVersion: '0.4.0',
    name: 'orch',
    plugins: [
      {
        type: 'bridge',
        bridge: 'orch0',
        isGateway: true,
        ipMasq: true,
        hairpinMode: true,
        ipam: { type: 'host-local', ranges: [[{ subnet: podCIDR }]], routes: [{ dst: v6 ? '::/0' : '0.0.0.0/0' }] }
      },
      { type: 'portmap', capabilities: { portMappings: true } }
    ]
  }
}

/** True when the dir holds a network configuration the runtime would load (libcni's extensions). */
export function hasNetworkConfig (dir: string): boolean {
  try {
    return readdirSync(dir).some(f => /\.(conf|conflist|json)$/.test(f))
  } catch { return false }
}

/**
 * Writes the conflist into `confDir` unless a network configuration is there already; returns the path written,
 * or undefined when it left the dir alone. Written to a temporary name and renamed, so the runtime's watch of the
 * dir never reads half a file.
 */
export function writeCniConfigIfMissing (confDir: string, podCIDR: string): string | undefined {
  if (hasNetworkConfig(confDir)) return undefined
  mkdirSync(confDir, { recursive: true })
  const path = join(confDir, CONFLIST_NAME)
  const tmp = `${path}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify(bridgeConflist(podCIDR), null, 2) + '\n')
  renameSync(tmp, path)
  return path
}

/** Asks the runtime where it reads CNI configuration, then writes ours there when none exists. */
export async function ensureCniConfig (o: { runtime: RuntimeService; podCIDR: string; logger: { info(o: object, m?: string): void; warn(o: object, m?: string): void } }): Promise<string | undefined> {
  if (o.runtime.cniConfDir === undefined) return undefined
  try {
    const dir = await o.runtime.cniConfDir()
    if (dir === undefined || dir === '') return undefined
    const written = writeCniConfigIfMissing(dir, o.podCIDR === '' ? DEFAULT_POD_CIDR : o.podCIDR)
    if (written !== undefined) o.logger.info({ path: written, podCIDR: o.podCIDR || DEFAULT_POD_CIDR }, 'wrote the CNI network configuration')
    return written
  } catch (err) {
    o.logger.warn({ err: (err as Error).message }, 'could not set up the CNI network configuration')
    return undefined
  }
}
