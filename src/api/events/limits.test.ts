// Numeric and size limits of spec part 8, enforced by the schemas.
import { describe, expect, it } from 'vitest';
import { Invalid } from '../errors.ts';
import { EXAMPLE_EVENTS } from './examples.ts';
import { parseEvent } from './parse.ts';

function locs(value: unknown): (string | number)[][] {
  try {
    parseEvent(value);
    return [];
  } catch (err) {
    if (!(err instanceof Invalid)) throw err;
    return err.detail.map((i) => i.loc);
  }
}

const withAction = (action: object) => ({ ...EXAMPLE_EVENTS.ActionEvent, action });

describe('limits', () => {
  it('summary_offset >= 0', () => {
    expect(locs({ ...EXAMPLE_EVENTS.Condensation, summary_offset: 0 })).toEqual([]);
    expect(locs({ ...EXAMPLE_EVENTS.Condensation, summary_offset: -1 })).toEqual([['summary_offset']]);
    expect(locs({ ...EXAMPLE_EVENTS.Condensation, summary_offset: 1.5 })).toEqual([['summary_offset']]);
    expect(locs({ ...EXAMPLE_EVENTS.Condensation, summary_offset: null })).toEqual([]);
  });

  it('CriticResult.score within 0..1', () => {
    const critic = (score: number) => ({ ...EXAMPLE_EVENTS.ActionEvent, critic_result: { score, message: null } });
    expect(locs(critic(0))).toEqual([]);
    expect(locs(critic(1))).toEqual([]);
    expect(locs(critic(1.01))).toEqual([['critic_result', 'score']]);
    expect(locs(critic(-0.1))).toEqual([['critic_result', 'score']]);
  });

  it('tab_id is exactly 4 characters', () => {
    expect(locs(withAction({ kind: 'BrowserSwitchTabAction', tab_id: 'ab12' }))).toEqual([]);
    expect(locs(withAction({ kind: 'BrowserSwitchTabAction', tab_id: 'abc' }))).toEqual([['action', 'tab_id']]);
    expect(locs(withAction({ kind: 'BrowserCloseTabAction', tab_id: 'abcde' }))).toEqual([['action', 'tab_id']]);
  });

  it('index, start_from_char and insert_line are integers >= 0', () => {
    expect(locs(withAction({ kind: 'BrowserClickAction', index: -1 }))).toEqual([['action', 'index']]);
    expect(locs(withAction({ kind: 'BrowserTypeAction', index: 0.5, text: 'x' }))).toEqual([['action', 'index']]);
    expect(locs(withAction({ kind: 'BrowserGetContentAction', start_from_char: -5 }))).toEqual([['action', 'start_from_char']]);
    expect(locs(withAction({ kind: 'FileEditorAction', command: 'insert', path: '/a', new_str: 'x', insert_line: -1 }))).toEqual([
      ['action', 'insert_line'],
    ]);
    expect(locs(withAction({ kind: 'FileEditorAction', command: 'insert', path: '/a', new_str: 'x', insert_line: 0 }))).toEqual([]);
  });

  it('enums: security_risk, source, scroll direction, editor command', () => {
    expect(locs({ ...EXAMPLE_EVENTS.ActionEvent, security_risk: 'EXTREME' })).toEqual([['security_risk']]);
    expect(locs({ ...EXAMPLE_EVENTS.PauseEvent, source: 'system' })).toEqual([['source']]);
    expect(locs(withAction({ kind: 'BrowserScrollAction', direction: 'left' }))).toEqual([['action', 'direction']]);
    expect(locs(withAction({ kind: 'FileEditorAction', command: 'delete', path: '/a' }))).toEqual([['action', 'command']]);
  });

  it('locates errors inside tuples', () => {
    const obs = (lines_shown: unknown) => ({
      ...EXAMPLE_EVENTS.ObservationEvent,
      observation: { kind: 'ReadFileObservation', file_path: '/a', lines_shown },
    });
    expect(locs(obs([1, 2]))).toEqual([]);
    expect(locs(obs([1, 'x']))).toEqual([['observation', 'lines_shown', 1]]);
  });

  it('applies action and observation defaults', () => {
    const ev = parseEvent(withAction({ kind: 'BrowserGetContentAction' }));
    expect(ev.kind === 'ActionEvent' && ev.action).toEqual({ kind: 'BrowserGetContentAction', extract_links: false, start_from_char: 0 });
    const scroll = parseEvent(withAction({ kind: 'BrowserScrollAction' }));
    expect(scroll.kind === 'ActionEvent' && scroll.action).toEqual({ kind: 'BrowserScrollAction', direction: 'down' });
    const obs = parseEvent({ ...EXAMPLE_EVENTS.ObservationEvent, observation: { kind: 'ThinkObservation' } });
    expect(obs.kind === 'ObservationEvent' && obs.observation).toEqual({ kind: 'ThinkObservation', content: [], is_error: false });
  });
});
