// The key usages a CertificateSigningRequest may name (certificates/v1 KeyUsage) and what each sets in a certificate.

import { KeyUsageFlags } from '@peculiar/x509'

/** KeyUsage extension bits, by usage name (Kubernetes' keyUsageDict). */
const KEY_USAGES: Record<string, number> = {
  signing: KeyUsageFlags.digitalSignature,
  'digital signature': KeyUsageFlags.digitalSignature,
  'content commitment': KeyUsageFlags.nonRepudiation,
  'key encipherment': KeyUsageFlags.keyEncipherment,
  'key agreement': KeyUsageFlags.keyAgreement,
  'data encipherment': KeyUsageFlags.dataEncipherment,
  'cert sign': KeyUsageFlags.keyCertSign,
  'crl sign': KeyUsageFlags.cRLSign,
  'encipher only': KeyUsageFlags.encipherOnly,
  'decipher only': KeyUsageFlags.decipherOnly
}

/** ExtendedKeyUsage OIDs, by usage name (Kubernetes' extKeyUsageDict). */
const EXTENDED_KEY_USAGES: Record<string, string> = {
  any: '2.5.29.37.0',
  'server auth': '1.3.6.1.5.5.7.3.1',
  'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4',
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1'
}

/** Every valid usage, sorted as Go's sets.List prints them in a NotSupported error. */
export const VALID_USAGES: readonly string[] = [...Object.keys(KEY_USAGES), ...Object.keys(EXTENDED_KEY_USAGES)].sort()

export function isValidUsage (u: string): boolean {
  return Object.hasOwn(KEY_USAGES, u) || Object.hasOwn(EXTENDED_KEY_USAGES, u)
}

export function keyUsageBits (usages: string[]): number {
  let bits = 0
  for (const u of usages) bits |= KEY_USAGES[u] ?? 0
  return bits
}

/** Extended key usage OIDs in the order first named, without repeats. */
export function extendedKeyUsageOids (usages: string[]): string[] {
  const out: string[] = []
  for (const u of usages) {
    const oid = EXTENDED_KEY_USAGES[u]
    if (oid !== undefined && !out.includes(oid)) out.push(oid)
  }
  return out
}
