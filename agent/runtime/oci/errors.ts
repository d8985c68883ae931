// The error type of the OCI image code (references, layouts, the registry client, the content store).

export type OciErrorCode =
  | 'OCI_ERR_BAD_REFERENCE' // an image reference that does not parse
  | 'OCI_ERR_DIGEST_MISMATCH' // a blob or manifest whose sha256 is not the one it was asked for
  | 'OCI_ERR_NOT_FOUND' // manifest, blob, tag or image unknown
  | 'OCI_ERR_UNSUPPORTED' // a media type or layout this code does not read
  | 'OCI_ERR_BAD_CONTENT' // malformed JSON, tar or layout
  | 'OCI_ERR_REGISTRY' // the registry answered with an error or could not be reached
  | 'OCI_ERR_AUTH' // the registry refused our credentials or token
  | 'OCI_ERR_TOO_LARGE' // a blob above the configured size limit

export class OciError extends Error {
  readonly code: OciErrorCode
  constructor (code: OciErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'OciError'
    this.code = code
  }
}
