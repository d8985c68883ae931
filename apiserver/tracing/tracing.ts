// Request tracing with OpenTelemetry: a server span per request continuing the client's W3C traceparent, child spans
// for the lifecycle steps, OTLP/gRPC export. Made per server (no global provider, no global context manager).

import { AsyncLocalStorage } from 'node:async_hooks'
import type { IncomingHttpHeaders } from 'node:http'
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc'
import { resourceFromAttributes } from '@opentelemetry/resources'
import {
  AlwaysOffSampler, BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, type SpanExporter
} from '@opentelemetry/sdk-trace-base'
import type { TracingSettings } from './config.js'

export interface Tracing {
  /** Runs `fn` under a server span named `name`, the child of the caller's `traceparent` when it sent one. */
  inRequest<T>(name: string, headers: IncomingHttpHeaders, attributes: Attributes, fn: (span: Span) => T): T
  /** `fn` under a child span of the current one; just `fn` outside a traced request or when it is not sampled. */
  step<T>(name: string, fn: () => Promise<T>, attributes?: Attributes): Promise<T>
  /** `fn` under a span of its own: the child of the current span, else the root of a new trace (sampled by the rate). */
  inSpan<T>(name: string, attributes: Attributes, fn: () => Promise<T>): Promise<T>
  /** A child span of the current one, ended by the caller; undefined outside a sampled request. */
  startChild(name: string, attributes?: Attributes): Span | undefined
  /** `traceparent` (and `tracestate`) of the current span, for outbound calls such as webhooks; {} when none. */
  outboundHeaders(): Record<string, string>
  /** Exports what is pending and stops. */
  shutdown(): Promise<void>
}

export interface TracingOptions extends TracingSettings {
  /** `service.name` of the spans (apiserver, orchlet). */
  serviceName: string
  /** Another exporter (tests); default OTLP over gRPC to `endpoint`, insecure as Kubernetes' tracing client. */
  exporter?: SpanExporter
}

const getter = {
  keys: (h: IncomingHttpHeaders) => Object.keys(h),
  get: (h: IncomingHttpHeaders, key: string) => h[key]
}
const setter = { set: (carrier: Record<string, string>, key: string, value: string) => { carrier[key] = value } }

export function createTracing (o: TracingOptions): Tracing {
  const rate = o.samplingRatePerMillion
  // Unset: follow the parent's decision and otherwise never sample (spec document 2 §2.1).
  const root = rate === undefined ? new AlwaysOffSampler() : new TraceIdRatioBasedSampler(rate / 1_000_000)
  const exporter = o.exporter ?? new OTLPTraceExporter({ url: `http://${o.endpoint}` })
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': o.serviceName }),
    sampler: new ParentBasedSampler({ root }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 500 })]
  })
  const tracer = provider.getTracer('orch')
  const propagator = new W3CTraceContextPropagator()
  const current = new AsyncLocalStorage<Context>()

  /** `fn` under a new internal span, the child of `parent`'s; an error marks the span. */
  async function within<T> (parent: Context, name: string, attributes: Attributes | undefined, fn: () => Promise<T>): Promise<T> {
    const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, parent)
    try {
      return await current.run(trace.setSpan(parent, span), fn)
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message })
      throw err
    } finally {
      span.end()
    }
  }

  return {
    inRequest (name, headers, attributes, fn) {
      const parent = propagator.extract(ROOT_CONTEXT, headers, getter)
      const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent)
      return current.run(trace.setSpan(parent, span), () => fn(span))
    },
    async step (name, fn, attributes) {
      const ctx = current.getStore()
      if (ctx === undefined || trace.getSpan(ctx)?.isRecording() !== true) return await fn()
      return await within(ctx, name, attributes, fn)
    },
    async inSpan (name, attributes, fn) {
      const ctx = current.getStore()
      if (ctx !== undefined && trace.getSpan(ctx)?.isRecording() !== true) return await fn()
      return await within(ctx ?? ROOT_CONTEXT, name, attributes, fn)
    },
    startChild (name, attributes) {
      const ctx = current.getStore()
      if (ctx === undefined || trace.getSpan(ctx)?.isRecording() !== true) return undefined
      return tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, ctx)
    },
    outboundHeaders () {
      const ctx = current.getStore()
      const carrier: Record<string, string> = {}
      if (ctx !== undefined) propagator.inject(ctx, carrier, setter)
      return carrier
    },
    async shutdown () { await provider.shutdown() }
  }
}
