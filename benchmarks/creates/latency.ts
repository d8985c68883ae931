// Closed-loop load shared by the creates harness's load processes: CLIENTS loops each issue one request at a time
// until COUNT are done; per-request latency from hrtime. IPC protocol: {ready} once warmed, then on any message the
// measured run, answered with {seconds, p50Ms, p99Ms, perSecond}.

// serverCpuUs: filled in by the harness for orch runs (the server's CPU per request over the measured run).
export interface LoadResult { seconds: number, p50Ms: number, p99Ms: number, perSecond: number, serverCpuUs?: number }

/** Runs `count` operations from `clients` concurrent loops; `op(i)` is one request, awaited. */
export async function closedLoop (count: number, clients: number, op: (i: number) => Promise<void>): Promise<LoadResult> {
  const lat = new Float64Array(count)
  let next = 0
  const t0 = process.hrtime.bigint()
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next < count) {
      const n = next++
      const s = process.hrtime.bigint()
      await op(n)
      lat[n] = Number(process.hrtime.bigint() - s) / 1e6
    }
  }))
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9
  lat.sort()
  const at = (q: number): number => Number(lat[Math.min(count - 1, Math.floor(q * count))]!.toFixed(3))
  return { seconds: Number(seconds.toFixed(3)), p50Ms: at(0.5), p99Ms: at(0.99), perSecond: Math.round(count / seconds) }
}

/** Warms up, reports ready, runs the measured load when the parent says so, reports and exits. */
export async function serve (warm: () => Promise<void>, measured: () => Promise<LoadResult>, close: () => Promise<void>): Promise<void> {
  process.once('message', () => {
    measured().then(async r => {
      await close()
      process.send!(r, () => process.exit(0))
    }, err => { console.error(err); process.exit(1) })
  })
  await warm()
  process.send!({ ready: true })
}
