// Guest side: Go's url.ParseRequestURI semantics for the Kubernetes URL library (QuickJS has no URL class).

const HEX = '0123456789ABCDEF'

/** Go's EscapedPath for a decoded path: escape what is not allowed unescaped in a path segment. */
function escapePath(p) {
  let out = ''
  for (const ch of unescape(encodeURIComponent(p))) {
    const c = ch.charCodeAt(0)
    if (/[A-Za-z0-9\-_.~$&+,/:;=@!*'()]/.test(ch)) out += ch
    else out += '%' + HEX[c >> 4] + HEX[c & 15]
  }
  return out
}

function unescapeComponent(s, plusIsSpace) {
  if (plusIsSpace) s = s.replace(/\+/g, ' ')
  if (/%(?![0-9A-Fa-f]{2})/.test(s)) throw new Error(`invalid URL escape "${/%.{0,2}/.exec(s)[0]}"`)
  return decodeURIComponent(s)
}

function parseQuery(raw) {
  const out = []
  if (!raw) return out
  for (const part of raw.split('&')) {
    if (!part || part.includes(';')) continue
    const i = part.indexOf('=')
    const k = i < 0 ? part : part.slice(0, i)
    const v = i < 0 ? '' : part.slice(i + 1)
    try {
      out.push([unescapeComponent(k, true), unescapeComponent(v, true)])
    } catch {
      // Go's url.ParseQuery skips pairs that do not unescape
    }
  }
  return out
}

function splitHost(authority) {
  const at = authority.lastIndexOf('@')
  const host = at >= 0 ? authority.slice(at + 1) : authority
  let hostname = host
  let port = ''
  if (host.startsWith('[')) {
    const end = host.indexOf(']')
    if (end < 0) throw new Error(`missing ']' in host`)
    hostname = host.slice(1, end)
    const rest = host.slice(end + 1)
    if (rest && !/^:\d*$/.test(rest)) throw new Error(`invalid port "${rest}" after host`)
    port = rest.slice(1)
  } else {
    const c = host.lastIndexOf(':')
    if (c >= 0) {
      port = host.slice(c + 1)
      hostname = host.slice(0, c)
      if (!/^\d*$/.test(port)) throw new Error(`invalid port ":${port}" after host`)
      if (hostname.includes(':')) throw new Error(`invalid port ":${port}" after host`)
    }
  }
  return { host, hostname, port }
}

/** Returns {url} or {error}; the URL holds scheme, host, hostname, port, escapedPath and query pairs. */
export function parseRequestURI(raw) {
  try {
    if (/[\x00-\x1f\x7f]/.test(raw)) throw new Error('invalid control character in URL')
    let rest = raw
    const hash = rest.indexOf('#')
    if (hash >= 0) rest = rest.slice(0, hash)
    const q = rest.indexOf('?')
    let query = ''
    if (q >= 0) {
      query = rest.slice(q + 1)
      rest = rest.slice(0, q)
    }
    let scheme = ''
    const sm = /^([A-Za-z][A-Za-z0-9+.\-]*):/.exec(rest)
    if (sm) {
      scheme = sm[1].toLowerCase()
      rest = rest.slice(sm[0].length)
    } else if (/^[^/]*:/.test(rest)) throw new Error('missing protocol scheme')
    if (!scheme && !rest.startsWith('/')) throw new Error(`invalid URI for request`)
    let host = ''
    let hostname = ''
    let port = ''
    if (rest.startsWith('//')) {
      const slash = rest.indexOf('/', 2)
      const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash)
      rest = slash < 0 ? '' : rest.slice(slash)
      ;({ host, hostname, port } = splitHost(authority))
    } else if (scheme && !rest.startsWith('/')) {
      // opaque URL such as mailto:x: Go keeps it as Opaque and the path is empty
      return { url: { scheme, host: '', hostname: '', port: '', escapedPath: '', query: parseQuery(query) } }
    }
    const path = unescapeComponent(rest, false)
    return { url: { scheme, host, hostname, port, escapedPath: escapePath(path), query: parseQuery(query) } }
  } catch (err) {
    return { error: `parse ${JSON.stringify(raw)}: ${err.message}` }
  }
}
