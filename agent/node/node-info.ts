// What the orchlet reports about its machine: capacity, allocatable, addresses and node info.

import { cpus, totalmem, hostname, release, networkInterfaces, arch as osArch } from 'node:os'
import { readFileSync, statfsSync } from 'node:fs'

export interface ResourceList { cpu?: number /* millicores */; memory?: number /* bytes */; 'ephemeral-storage'?: number; pid?: number }

export interface MachineFacts {
  cpuMillis: number
  memoryBytes: number
  ephemeralStorageBytes: number
  machineID: string
  systemUUID: string
  bootID: string
  kernelVersion: string
  osImage: string
  architecture: string
  hostname: string
}

function readTrim (path: string): string {
  try { return readFileSync(path, 'utf8').trim() } catch { return '' }
}

function osImage (): string {
  const text = readTrim('/etc/os-release')
  const m = /^PRETTY_NAME="?([^"\n]*)"?/m.exec(text)
  return m?.[1] ?? 'Linux'
}

/** Go's GOARCH spelling, which is what node labels and nodeInfo carry. */
export function goArch (nodeArch: string): string {
  return ({ x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' } as Record<string, string>)[nodeArch] ?? nodeArch
}

export function readMachineFacts (rootDir: string): MachineFacts {
  let ephemeral = 0
  try {
    const fs = statfsSync(rootDir)
    ephemeral = fs.blocks * fs.bsize
  } catch {
    try { const fs = statfsSync('/'); ephemeral = fs.blocks * fs.bsize } catch { ephemeral = 0 }
  }
  return {
    cpuMillis: cpus().length * 1000,
    memoryBytes: totalmem(),
    ephemeralStorageBytes: ephemeral,
    machineID: readTrim('/etc/machine-id'),
    systemUUID: readTrim('/sys/class/dmi/id/product_uuid') || readTrim('/etc/machine-id'),
    bootID: readTrim('/proc/sys/kernel/random/boot_id'),
    kernelVersion: release(),
    osImage: osImage(),
    architecture: goArch(osArch()),
    hostname: hostname().toLowerCase()
  }
}

/** Formats millicores and bytes the way Kubernetes prints quantities in node status. */
export function formatCpu (millis: number): string {
  return millis % 1000 === 0 ? String(millis / 1000) : `${millis}m`
}

export function formatBytes (bytes: number): string {
  if (bytes % (1024 * 1024 * 1024) === 0 && bytes > 0) return `${bytes / (1024 * 1024 * 1024)}Gi`
  if (bytes % (1024 * 1024) === 0 && bytes > 0) return `${bytes / (1024 * 1024)}Mi`
  if (bytes % 1024 === 0 && bytes > 0) return `${bytes / 1024}Ki`
  return String(bytes)
}

export interface Reservations {
  orchReserved: ResourceList
  systemReserved: ResourceList
  /** The memory.available hard-eviction threshold in bytes (0 when given as a percentage of 0). */
  evictionHardMemoryBytes: number
  /** The nodefs.available hard-eviction threshold in bytes (the kubelet's hardEvictionReservation for ephemeral-storage). */
  evictionHardEphemeralStorageBytes?: number
}

export interface CapacityReport { capacity: Record<string, string>; allocatable: Record<string, string> }

/** allocatable = capacity - orch-reserved - system-reserved - hard eviction threshold (memory, nodefs), floored at 0. */
export function capacityReport (facts: MachineFacts, maxPods: number, r: Reservations): CapacityReport {
  const cpu = facts.cpuMillis
  const mem = facts.memoryBytes
  const eph = facts.ephemeralStorageBytes
  const sub = (total: number, ...parts: Array<number | undefined>): number =>
    Math.max(0, parts.reduce<number>((acc, p) => acc - (p ?? 0), total))
  return {
    capacity: {
      cpu: formatCpu(cpu),
      memory: formatBytes(mem),
      'ephemeral-storage': formatBytes(eph),
      pods: String(maxPods)
    },
    allocatable: {
      cpu: formatCpu(sub(cpu, r.orchReserved.cpu, r.systemReserved.cpu)),
      memory: formatBytes(sub(mem, r.orchReserved.memory, r.systemReserved.memory, r.evictionHardMemoryBytes)),
      'ephemeral-storage': formatBytes(sub(eph, r.orchReserved['ephemeral-storage'], r.systemReserved['ephemeral-storage'], r.evictionHardEphemeralStorageBytes)),
      pods: String(maxPods)
    }
  }
}

/** The node's addresses: the given --node-ip (one or a dual-stack pair) or the first non-internal IPv4. */
export function nodeAddresses (nodeIPs: string[], host: string): Array<{ type: string; address: string }> {
  let ips = nodeIPs.filter(ip => ip !== '' && ip !== '::' && ip !== '0.0.0.0')
  if (ips.length === 0) {
    const preferV6 = nodeIPs.includes('::')
    const all = Object.values(networkInterfaces()).flat().filter(i => i !== undefined && !i.internal)
    const pick = all.find(i => i?.family === (preferV6 ? 'IPv6' : 'IPv4')) ?? all[0]
    ips = [pick?.address ?? '127.0.0.1']
  }
  return [...ips.map(address => ({ type: 'InternalIP', address })), { type: 'Hostname', address: host }]
}

/**
 * A hard-eviction threshold as bytes of the given capacity (GetThresholdQuantity: a percentage is truncated
 * to whole bytes); 0 when the signal has no hard threshold.
 */
export function hardEvictionBytes (thresholds: ReadonlyArray<{ signal: string; value: { quantity: number } | { percent: number } }>, signal: string, capacity: number): number {
  const t = thresholds.find(x => x.signal === signal)
  if (t === undefined) return 0
  return 'quantity' in t.value ? t.value.quantity : Math.floor(capacity * t.value.percent / 100)
}
