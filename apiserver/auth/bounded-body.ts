// Reading an outbound HTTP answer (issuer discovery, JWKS, webhook reviews) with a size cap, so a peer cannot make the server buffer without end.

/** The body as UTF-8 text; throws once more than `maxBytes` arrived (the rest is not read). */
export async function boundedText (body: AsyncIterable<Uint8Array> & { destroy?: (err?: Error) => unknown }, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    size += chunk.byteLength
    if (size > maxBytes) {
      const err = new Error(`the answer is larger than ${maxBytes} bytes`)
      body.destroy?.(err)
      throw err
    }
    chunks.push(Buffer.from(chunk))
  }
  return Buffer.concat(chunks).toString('utf8')
}
