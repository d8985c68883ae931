import t from 'tap'
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { createTracing } from './tracing.js'

/** Keeps what was exported past shutdown (the in-memory exporter forgets its spans when shut down). */
class KeepingExporter extends InMemorySpanExporter {
  readonly kept: ReadableSpan[] = []
  override export (spans: ReadableSpan[], done: Parameters<InMemorySpanExporter['export']>[1]): void {
    this.kept.push(...spans)
    super.export(spans, done)
  }
}

const sampledParent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
const unsampledParent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00'

async function run (rate: number | undefined, headers: Record<string, string>): Promise<{ names: string[], outbound: Record<string, string> }> {
  const exporter = new KeepingExporter()
  const tracing = createTracing({ endpoint: 'localhost:4317', samplingRatePerMillion: rate, serviceName: 'test', exporter })
  let outbound: Record<string, string> = {}
  await tracing.inRequest('KubernetesAPI', headers, {}, async span => {
    await tracing.step('storage', async () => { outbound = tracing.outboundHeaders() })
    span.end()
  })
  await tracing.shutdown()
  return { names: exporter.kept.map(s => s.name).sort(), outbound }
}

t.test('no rate: a sampled parent is followed, a request without one is never sampled', async t => {
  t.same((await run(undefined, { traceparent: sampledParent })).names, ['KubernetesAPI', 'storage'])
  t.same((await run(undefined, {})).names, [])
  t.same((await run(undefined, { traceparent: unsampledParent })).names, [])
})

t.test('rate 1,000,000 samples every root; rate 0 none', async t => {
  t.same((await run(1_000_000, {})).names, ['KubernetesAPI', 'storage'])
  t.same((await run(0, {})).names, [])
})

t.test('outbound headers carry the current span in the caller\'s trace', async t => {
  const { outbound } = await run(undefined, { traceparent: sampledParent })
  t.match(outbound.traceparent, /^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/)
  t.not(outbound.traceparent.split('-')[2], '00f067aa0ba902b7', 'the child span, not the client\'s')
})

t.test('outside a request a step just runs and no headers are made', async t => {
  const tracing = createTracing({ endpoint: 'localhost:4317', serviceName: 'test', exporter: new InMemorySpanExporter() })
  t.equal(await tracing.step('storage', async () => 42), 42)
  t.same(tracing.outboundHeaders(), {})
  t.equal(tracing.startChild('encode'), undefined)
  await tracing.shutdown()
})
