import { describe, expect, it } from 'vitest';
import { telemetryFromEnv, tracesUrl, tracingEnabled } from './provider.ts';

describe('trace export settings (the standard OpenTelemetry variables)', () => {
  it.each([
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }, false],
  ])('%j → %s', (env, on) => {
    expect(tracingEnabled(env)).toBe(on);
  });

  it('sends to the traces endpoint as given, else the base endpoint + /v1/traces', () => {
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })).toBe('http://c:4318/v1/traces');
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t/x' })).toBe('http://t/x');
  });

  it('is nothing at all when off', async () => {
    expect(await telemetryFromEnv({})).toBeUndefined();
  });
});
