// Guest side: CEL's regex functions on re2js (RE2 in JavaScript): RE2 syntax, Go's error wording, linear time.
//
// Kubernetes evaluates `matches`/`find`/`findAll` with Go's regexp (RE2), whose matching time is linear in the
// input; QuickJS's backtracking RegExp is exponential on patterns like `^(a+)+$`, which held the API server's
// thread until the deadline. re2js parses with RE2's own parser and Go's flags (Perl syntax, no lookaround or
// backreferences), and words its syntax errors as Go does ("error parsing regexp: missing closing ): `(`").
// Compiled patterns are cached with their lazily built DFA, bounded in number and DFA memory (below).

import { RE2JS } from 're2js'

function regexError(err, re) {
  const msg = String(err?.message ?? err)
  const e = new Error(/^error parsing regexp: /.test(msg) ? msg : `error parsing regexp: ${msg}: \`${re}\``)
  e.celEval = true
  return e
}

/**
 * Bounds on what compiled patterns keep alive between evaluations: re2js grows each pattern's lazy DFA up to
 * an estimated 8 MiB before resetting it, and a pattern whose DFA explodes (`(a|b)*a(a|b){20}$`) reaches that;
 * kept for 64 patterns it would fill the guest heap for good. 32 patterns at 256 KiB each (measured: ~12 MiB of guest heap at most) stay well inside
 * the default 64 MiB cap; a pattern needing more states resets its DFA (slower, still linear).
 */
const MAX_PATTERNS = 32
const DFA_BUDGET_BYTES = 256 * 1024

/** A cache of compiled RE2 patterns: `compile` throws a CEL evaluation error for a bad pattern. */
export function createRegexCache(max = MAX_PATTERNS, dfaBudget = DFA_BUDGET_BYTES) {
  const cache = new Map()
  function compile(re) {
    let rx = cache.get(re)
    if (rx) return rx
    try {
      rx = RE2JS.compile(re)
    } catch (err) {
      throw regexError(err, re)
    }
    // re2js 2.10 takes the DFA budget only in its constructor; the lazily made DFA is created here to set it.
    const dfa = rx.re2().dfa
    dfa.stateBudget = dfa.memBudget = dfaBudget
    if (cache.size >= max) cache.delete(cache.keys().next().value)
    cache.set(re, rx)
    return rx
  }
  /** Runs `fn` on the compiled pattern; a pattern interrupted mid-match (deadline, memory) is dropped, not reused. */
  function use(re, fn) {
    const rx = compile(re)
    try {
      return fn(rx)
    } catch (err) {
      cache.delete(re)
      throw err
    }
  }
  return { compile, use }
}

const regexes = createRegexCache()
export const compileRegex = regexes.compile

/** Go's `regexp.MatchString`: does the pattern match anywhere in `s`. */
export const regexMatches = (s, re) => regexes.use(re, (rx) => rx.test(s))

/** Go's `FindString`: the leftmost match, or '' when there is none. */
export const regexFind = (s, re) => regexes.use(re, (rx) => rx.re2().find(s) ?? '')

/** Go's `FindAllString(s, n)`: successive non-overlapping matches, empty ones abutting a match skipped; n < 0 all. */
export function regexFindAll(s, re, n) {
  if (n === 0n) return []
  const limit = n < 0n || n > BigInt(s.length + 1) ? s.length + 1 : Number(n)
  return regexes.use(re, (rx) => rx.re2().findAll(s, limit) ?? [])
}
