// The usage a provider reports, read from a chat-completions answer: the `usage` object of a JSON
// answer, or of the last server-sent chunk that carries one (stream_options.include_usage).
import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

export interface CallUsage {
  model: string | undefined;
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  reasoningTokens: number;
  cost: number;
}

const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

/** Usage of one answer object (a completion or a chunk); undefined when it has none. */
export function usageOf(answer: unknown): CallUsage | undefined {
  if (typeof answer !== 'object' || answer === null) return undefined;
  const { usage, model } = answer as { usage?: unknown; model?: unknown };
  if (typeof usage !== 'object' || usage === null) return undefined;
  const u = usage as Record<string, unknown> & { prompt_tokens_details?: { cached_tokens?: unknown } | null; completion_tokens_details?: { reasoning_tokens?: unknown } | null };
  return {
    model: typeof model === 'string' ? model : undefined,
    promptTokens: count(u.prompt_tokens),
    completionTokens: count(u.completion_tokens),
    cacheReadTokens: count(u.prompt_tokens_details?.cached_tokens),
    reasoningTokens: count(u.completion_tokens_details?.reasoning_tokens),
    cost: count(u.cost),
  };
}

/**
 * Passes a server-sent-events body through unchanged while reading its `data:` lines; at the end
 * it hands the last usage seen to `onEnd`, and the stream ends only once that has settled, so the
 * usage is stored before the client sees the answer end.
 */
export class SseUsageTap extends Transform {
  #rest = '';
  readonly #decoder = new StringDecoder('utf8');
  #usage: CallUsage | undefined;
  readonly #onEnd: (usage: CallUsage | undefined) => Promise<void>;

  constructor(onEnd: (usage: CallUsage | undefined) => Promise<void>) {
    super();
    this.#onEnd = onEnd;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    const lines = (this.#rest + this.#decoder.write(chunk)).split('\n');
    this.#rest = lines.pop() ?? '';
    for (const line of lines) this.#line(line);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    this.#line(this.#rest + this.#decoder.end());
    this.#onEnd(this.#usage).then(
      () => done(),
      (err: unknown) => done(err as Error),
    );
  }

  #line(line: string): void {
    const data = line.startsWith('data:') ? line.slice(5).trim() : '';
    if (!data || data === '[DONE]' || !data.includes('"usage"')) return;
    try {
      this.#usage = usageOf(JSON.parse(data)) ?? this.#usage;
    } catch {
      // not JSON: the provider's business, passed through as it is
    }
  }
}
