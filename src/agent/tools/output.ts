// What the model reads of a tool's output: capped, with the start and the end kept.

/** OpenHands' MAX_CMD_OUTPUT_SIZE: longer outputs lose their middle. */
export const MAX_OUTPUT_CHARS = 30_000;

export function capOutput(text: string, max = MAX_OUTPUT_CHARS): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n<response clipped: ${text.length - max} characters omitted>\n${text.slice(-half)}`;
}

/** Tools cap their own output; this only guards against an observation from elsewhere (room for notes). */
const RENDER_LIMIT = MAX_OUTPUT_CHARS + 5_000;

/** The text of an observation's content items. */
export function contentText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content.map((c: { type?: string; text?: string }) => (c.type === undefined || c.type === 'text' ? (c.text ?? '') : '')).join('');
}

/**
 * What the model sees for an observation, rendered from the persisted observation alone (so a
 * restarted agent shows the model the same text). A terminal result reads as OpenHands renders it:
 * prefix, output, suffix, then the working directory and the exit code unless still running (-1).
 */
export function observationText(observation: { kind: string } & Record<string, unknown>): string {
  const body = contentText(observation.content);
  // OpenHands' TaskObservation.to_llm_content: the task's id, sub-agent and status before its answer.
  if (observation.kind === 'TaskObservation') {
    const head = `Task ID: ${String(observation.task_id)}\nSubagent: ${String(observation.subagent)}\nStatus: ${String(observation.status)}`;
    return capOutput(`${head}\n${observation.is_error ? '[An error occurred during execution.]\n' : ''}${body}`, RENDER_LIMIT);
  }
  if (observation.kind !== 'TerminalObservation') return capOutput(body, RENDER_LIMIT);
  const meta = (observation.metadata ?? {}) as { prefix?: string; suffix?: string; working_dir?: string | null };
  let text = `${meta.prefix ?? ''}${body}${meta.suffix ?? ''}`;
  if (!observation.is_error) {
    if (meta.working_dir) text += `\n[Current working directory: ${meta.working_dir}]`;
    const exit = observation.exit_code;
    if (typeof exit === 'number' && exit !== -1) text += `\n[Command finished with exit code ${exit}]`;
  }
  return capOutput(text, RENDER_LIMIT);
}
