// The CertificateApproval / CertificateSigning admission question, asked of an Authorizer: may this user `approve`
// (or `sign`) for signer `example.com/name`? Granted on the signer's name or on the wildcard `example.com/*`, as
// Kubernetes' IsAuthorizedForSignerName. The registry's CSR strategy takes the result (RegistryOptions.signerPermission).

import { resourceAttributes, type Authorizer } from './types.js'
import type { SignerPermission } from '../registry/strategies/csr.js'

export function signerPermission (authorizer: Authorizer): SignerPermission {
  return async (user, verb, signerName) => {
    const allowed = async (name: string): Promise<boolean> => (await authorizer.authorize(resourceAttributes(user, {
      verb, apiGroup: 'certificates.k8s.io', apiVersion: '*', resource: 'signers', name
    }))).decision === 'allow'
    if (await allowed(signerName)) return true
    const slash = signerName.indexOf('/')
    return slash > 0 && await allowed(`${signerName.slice(0, slash)}/*`)
  }
}
