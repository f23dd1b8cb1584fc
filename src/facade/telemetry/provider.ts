// OpenTelemetry trace export, on only when the standard OTLP endpoint variables are set. The SDK is
// imported lazily, so an installation without tracing loads none of it and pays nothing.
// Spans go over OTLP/HTTP (JSON) to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT
// + /v1/traces; the exporter reads those (and OTEL_EXPORTER_OTLP_HEADERS) itself.
import type { Tracer } from '@opentelemetry/api';
import type { IdGenerator } from '@opentelemetry/sdk-trace';
import type { Logger } from '../../util/log.ts';

export interface Telemetry {
  tracer: Tracer;
  /** Ids for the next span started inside `fn` (deterministic trace and root ids, see start-traces.ts). */
  withIds<T>(ids: { traceId?: string; spanId?: string }, fn: () => T): T;
  /** Exports what has ended so far. */
  flush(): Promise<void>;
  /** Flushes and stops the exporter. */
  shutdown(): Promise<void>;
}

/** True when the environment asks for trace export (the OpenTelemetry variables, as SDKs read them). */
export function tracingEnabled(env: NodeJS.ProcessEnv): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? 'otlp').split(',').map((s) => s.trim().toLowerCase());
  if (!exporters.includes('otlp')) return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/**
 * Random ids, except inside withIds(): the tracer asks for a span id (and, for a root, a trace id)
 * synchronously while starting a span, so a slot set around that one call is safe.
 */
export class SlotIds implements IdGenerator {
  readonly #random: IdGenerator;
  next: { traceId?: string; spanId?: string } | undefined;

  constructor(random: IdGenerator) {
    this.#random = random;
  }

  generateTraceId(): string {
    return this.next?.traceId ?? this.#random.generateTraceId();
  }

  generateSpanId(): string {
    return this.next?.spanId ?? this.#random.generateSpanId();
  }
}

/** Where spans go: the signal-specific endpoint as given, else the base endpoint + /v1/traces. */
export function tracesUrl(env: NodeJS.ProcessEnv): string {
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  return `${(env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '').replace(/\/+$/, '')}/v1/traces`;
}

/** The standard OTEL_BSP_* variables (this SDK version takes them as options only). */
function batchOptions(env: NodeJS.ProcessEnv): { scheduledDelayMillis?: number; exportTimeoutMillis?: number; maxQueueSize?: number; maxExportBatchSize?: number } {
  const num = (name: string) => {
    const v = Number(env[name]);
    return env[name] && Number.isFinite(v) && v > 0 ? v : undefined;
  };
  const out: ReturnType<typeof batchOptions> = {};
  const pairs = [
    ['scheduledDelayMillis', 'OTEL_BSP_SCHEDULE_DELAY'],
    ['exportTimeoutMillis', 'OTEL_BSP_EXPORT_TIMEOUT'],
    ['maxQueueSize', 'OTEL_BSP_MAX_QUEUE_SIZE'],
    ['maxExportBatchSize', 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'],
  ] as const;
  for (const [key, name] of pairs) {
    const v = num(name);
    if (v !== undefined) out[key] = v;
  }
  return out;
}

/** The telemetry the environment asks for, or undefined (nothing loaded) when tracing is off. */
export async function telemetryFromEnv(env: NodeJS.ProcessEnv = process.env, serviceName = 'agentyard', log?: Logger): Promise<Telemetry | undefined> {
  if (!tracingEnabled(env)) return undefined;
  const [{ TracerProvider, BatchSpanProcessor, RandomIdGenerator }, { OTLPTraceExporter }, { resourceFromAttributes }, { ATTR_SERVICE_NAME }] = await Promise.all([
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/semantic-conventions'),
  ]);
  const ids = new SlotIds(new RandomIdGenerator());
  // The exporter is built against its own (same-major) copy of sdk-trace; the shapes agree.
  const exporter = new OTLPTraceExporter({ url: tracesUrl(env) }) as unknown as ConstructorParameters<typeof BatchSpanProcessor>[0]['exporter'];
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME || serviceName }),
    idGenerator: ids,
    spanProcessors: [new BatchSpanProcessor({ exporter, ...batchOptions(env) })],
  });
  let stopped: Promise<void> | undefined;
  return {
    tracer: provider.getTracer('agentyard'),
    withIds(next, fn) {
      ids.next = next;
      try {
        return fn();
      } finally {
        ids.next = undefined;
      }
    },
    // A collector that is down must not fail a request or a shutdown: export errors are logged.
    flush: () => provider.forceFlush().catch((err: unknown) => log?.warn({ err }, 'exporting spans failed')),
    shutdown: () => (stopped ??= provider.shutdown().catch((err: unknown) => log?.warn({ err }, 'exporting spans failed'))),
  };
}
