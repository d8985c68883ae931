// Preloaded into a benchmarked server (`node --import`): on SIGUSR2 it prints its memory use, in MiB, to stderr.
process.on('SIGUSR2', () => {
  const m = process.memoryUsage()
  const mib = (n) => Math.round(n / 1048576)
  process.stderr.write(`HEAP ${mib(m.heapUsed)} TOTAL ${mib(m.heapTotal)} EXTERNAL ${mib(m.external)} BUFFERS ${mib(m.arrayBuffers)}\n`)
})
