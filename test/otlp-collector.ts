// A test OTLP/gRPC trace collector: the TraceService Export call, decoded with protobufjs from the subset of the
// OpenTelemetry protocol's messages the tests read (field numbers from opentelemetry-proto, Apache-2.0).

import * as grpc from '@grpc/grpc-js'
import protobuf from 'protobufjs'

const OTLP_TRACE_PROTO = `
syntax = "proto3";
package opentelemetry.proto.collector.trace.v1;
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; } }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9;
}
message ScopeSpans { repeated Span spans = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ExportTraceServiceResponse {}
`

export interface CollectedSpan {
  name: string
  traceId: string
  spanId: string
  parentSpanId: string
  service: string
  attributes: Record<string, string | number | boolean>
}

export interface TestCollector {
  /** host:port for a TracingConfiguration's `endpoint`. */
  endpoint: string
  spans: CollectedSpan[]
  /** Resolves once `ok` holds for the spans received, or rejects after `timeoutMs`. */
  waitFor(ok: (spans: CollectedSpan[]) => boolean, timeoutMs?: number): Promise<CollectedSpan[]>
  close(): Promise<void>
}

type Value = { stringValue?: string, boolValue?: boolean, intValue?: number, doubleValue?: number }
type Attr = { key: string, value?: Value }

function attributesOf (list: Attr[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {}
  for (const a of list ?? []) out[a.key] = a.value?.stringValue ?? a.value?.boolValue ?? a.value?.intValue ?? a.value?.doubleValue ?? ''
  return out
}

export async function startTestCollector (): Promise<TestCollector> {
  const root = protobuf.parse(OTLP_TRACE_PROTO, { keepCase: false }).root
  const Request = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest')
  const spans: CollectedSpan[] = []
  const server = new grpc.Server()
  server.addService({
    Export: {
      path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
      requestStream: false,
      responseStream: false,
      requestSerialize: (v: Buffer) => v,
      requestDeserialize: (b: Buffer) => b,
      responseSerialize: () => Buffer.alloc(0),
      responseDeserialize: (b: Buffer) => b
    }
  }, {
    Export: (call: grpc.ServerUnaryCall<Buffer, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const req = Request.toObject(Request.decode(call.request), { longs: Number, bytes: String }) as {
        resourceSpans?: Array<{ resource?: { attributes?: Attr[] }, scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }> }>
      }
      for (const rs of req.resourceSpans ?? []) {
        const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '')
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              name: String(s.name),
              traceId: Buffer.from(String(s.traceId ?? ''), 'base64').toString('hex'),
              spanId: Buffer.from(String(s.spanId ?? ''), 'base64').toString('hex'),
              parentSpanId: Buffer.from(String(s.parentSpanId ?? ''), 'base64').toString('hex'),
              service,
              attributes: attributesOf(s.attributes as Attr[] | undefined)
            })
          }
        }
      }
      callback(null, {})
    }
  })
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => { if (err !== null) reject(err); else resolve(p) })
  })
  return {
    endpoint: `127.0.0.1:${port}`,
    spans,
    async waitFor (ok, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs
      while (!ok(spans)) {
        if (Date.now() > deadline) throw new Error(`spans not received in time; got: ${spans.map(s => s.name).join(', ')}`)
        await new Promise(resolve => setTimeout(resolve, 100))
      }
      return spans
    },
    async close () { await new Promise<void>(resolve => server.tryShutdown(() => resolve())) }
  }
}
