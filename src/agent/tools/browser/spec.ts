// What one browser tool is made of: its OpenHands name and action kind, the model-facing schema,
// and what it does on the conversation's BrowserSession: text for the observation, or text with a
// screenshot or the directory a file was saved in (the observation's full_output_save_dir).
import type { Action } from '../../../api/events/index.ts';
import type { BrowserSession } from './session.ts';

export type BrowserKind = Extract<Action['kind'], `Browser${string}Action`>;
export type Act<K extends BrowserKind> = Extract<Action, { kind: K }>;

export interface BrowserToolSpec<K extends BrowserKind> {
  name: string;
  kind: K;
  description: string;
  properties?: Record<string, unknown>;
  required?: string[];
  readOnly?: boolean;
  toAction(args: Record<string, unknown>): Act<K>;
  run(action: Act<K>, session: BrowserSession): Promise<string | { text: string; screenshot?: string; saveDir?: string }>;
}
