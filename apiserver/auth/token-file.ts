// The static token file (--token-auth-file): CSV lines `token,user,uid[,"group1,group2"]`, read once at start.

import { readFile } from 'node:fs/promises'
import type { AuthResult, TokenAuthenticator } from './types.js'

/** One CSV record with double-quoted fields (RFC 4180, as Go's encoding/csv reads the file). */
function parseCsvLine (line: string): string[] {
  const out: string[] = []
  let field = ''
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    const c = line[i]
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') { field += '"'; i++ } else if (c === '"') quoted = false
      else field += c
    } else if (c === '"' && field === '') quoted = true
    else if (c === ',') { out.push(field); field = '' } else field += c
  }
  out.push(field)
  return out
}

/** Parses the file's text; throws naming the line of a malformed record. */
export function parseTokenFile (text: string, file = 'token file'): Map<string, AuthResult> {
  const tokens = new Map<string, AuthResult>()
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return
    const rec = parseCsvLine(line)
    if (rec.length < 3) throw new Error(`${file}: token file '${file}' must have at least 3 columns (token, user name, user uid), found ${rec.length} on line ${i + 1}`)
    const [token, username, uid, groups] = rec
    if (token === '') return
    if (tokens.has(token)) throw new Error(`${file}: duplicate token on line ${i + 1}`)
    const groupList = groups === undefined ? [] : groups.split(',').map(g => g.trim()).filter(g => g !== '')
    tokens.set(token, { user: { username, uid, groups: groupList } })
  })
  return tokens
}

export async function loadTokenFile (path: string): Promise<TokenAuthenticator> {
  return staticTokens(parseTokenFile(await readFile(path, 'utf8'), path))
}

export function staticTokens (tokens: Map<string, AuthResult>): TokenAuthenticator {
  return {
    async authenticateToken (token) {
      const hit = tokens.get(token)
      return hit === undefined ? undefined : { user: { ...hit.user, groups: [...hit.user.groups] } }
    }
  }
}
