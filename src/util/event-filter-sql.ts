// The WHERE clause both SQLite event logs (the agent server's and the app's) filter with: one
// conversation, optionally a kind, a source and a half-open time range on normalised UTC strings.
export interface EventColumnsFilter {
  /** A short kind name (callers normalise OpenHands spellings first). */
  kind?: string;
  source?: string;
  timestampGte?: string;
  timestampLt?: string;
}

export function eventFilterSql(conversationId: string, f: EventColumnsFilter): { sql: string; args: unknown[] } {
  const parts = ['conversation_id = ?'];
  const args: unknown[] = [conversationId];
  const add = (clause: string, value: unknown) => {
    parts.push(clause);
    args.push(value);
  };
  if (f.kind !== undefined) add('kind = ?', f.kind);
  if (f.source !== undefined) add('source = ?', f.source);
  if (f.timestampGte !== undefined) add('ts >= ?', f.timestampGte);
  if (f.timestampLt !== undefined) add('ts < ?', f.timestampLt);
  return { sql: parts.join(' AND '), args };
}
