import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseEvent, type Event, type GlobObservation, type GrepObservation, type TaskTrackerObservation } from '../../api/events/index.ts';
import { observationEvent } from '../events.ts';
import { globTool, splitAbsolutePattern } from './glob.ts';
import { grepTool } from './grep.ts';
import { taskTrackerTool } from './task-tracker.ts';
import { ToolArgumentError, type ToolContext } from './tool.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Files with increasing modification times in the order given (the last is the newest). */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'search-'));
  dirs.push(root);
  let t = 1_700_000_000;
  for (const [p, text] of Object.entries(files)) {
    const full = join(root, p);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
    utimesSync(full, t, t);
    t += 10;
  }
  return root;
}

const ctx = (workspaceDir: string): ToolContext => ({ workspaceDir, mask: (s) => s.replaceAll('s3cret', '<secret-hidden>') });

describe('glob', () => {
  it('finds files by pattern, newest first, skipping .git and node_modules', async () => {
    const ws = tree({ 'a.ts': '', 'src/b.tsx': '', 'src/deep/c.ts': '', 'node_modules/x/d.ts': '', '.git/e.ts': '', 'f.js': '' });
    const tool = globTool(ws);
    const obs = (await tool.execute(tool.toAction({ pattern: '**/*.{ts,tsx}' }), ctx(ws))) as GlobObservation;
    expect(obs).toMatchObject({ kind: 'GlobObservation', is_error: false, pattern: '**/*.{ts,tsx}', search_path: ws, truncated: false });
    expect(obs.files).toEqual([join(ws, 'src/deep/c.ts'), join(ws, 'src/b.tsx'), join(ws, 'a.ts')]);
    expect(obs.content![0]).toMatchObject({ text: expect.stringContaining(`Found 3 file(s) matching pattern '**/*.{ts,tsx}' in '${ws}':\n${join(ws, 'src/deep/c.ts')}`) });
    parseEvent(observationEvent({ tool_name: 'glob', tool_call_id: 'c', id: 'a' } as never, obs));
  });

  it('takes a path or an absolute pattern, caps at 100, and reports a bad directory as an error', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 105; i++) files[`many/f${i}.txt`] = '';
    const ws = tree(files);
    const tool = globTool(ws);
    const capped = (await tool.execute(tool.toAction({ pattern: '*.txt', path: join(ws, 'many') }), ctx(ws))) as GlobObservation;
    expect(capped.files).toHaveLength(100);
    expect(capped.truncated).toBe(true);
    expect(capped.files[0]).toBe(join(ws, 'many/f104.txt'));
    const abs = (await tool.execute(tool.toAction({ pattern: `${ws}/many/f10?.txt` }), ctx(ws))) as GlobObservation;
    expect(abs.search_path).toBe(join(ws, 'many'));
    expect(abs.files).toHaveLength(5);
    expect(splitAbsolutePattern('/a/b/**/*.ts')).toEqual({ dir: '/a/b', pattern: '**/*.ts' });
    const bad = (await tool.execute(tool.toAction({ pattern: '*', path: join(ws, 'nope') }), ctx(ws))) as GlobObservation;
    expect(bad).toMatchObject({ is_error: true, files: [] });
    const none = (await tool.execute(tool.toAction({ pattern: '*.md' }), ctx(ws))) as GlobObservation;
    expect(none.content![0]).toMatchObject({ text: `No files found matching pattern '*.md' in directory '${ws}'` });
  });
});

describe('grep', () => {
  it('finds files whose content matches, ignoring case, filtered by include, newest first', async () => {
    const ws = tree({ 'a.ts': 'const Foo = 1', 'b.tsx': 'foo()', 'c.js': 'FOO', '.hidden/d.ts': 'foo', 'bin.dat': 'foo\0bar', 'e.ts': 'nothing' });
    const tool = grepTool(ws);
    const all = (await tool.execute(tool.toAction({ pattern: 'fo+' }), ctx(ws))) as GrepObservation;
    expect(all.matches).toEqual([join(ws, 'c.js'), join(ws, 'b.tsx'), join(ws, 'a.ts')]);
    const ts = (await tool.execute(tool.toAction({ pattern: 'foo', include: '*.{ts,tsx}' }), ctx(ws))) as GrepObservation;
    expect(ts).toMatchObject({ matches: [join(ws, 'b.tsx'), join(ws, 'a.ts')], include_pattern: '*.{ts,tsx}', search_path: ws, truncated: false, is_error: false });
    expect(ts.content![0]).toMatchObject({ text: expect.stringContaining("(filtered by '*.{ts,tsx}'):") });
    const named = (await tool.execute(tool.toAction({ pattern: '(?P<w>const) Foo' }), ctx(ws))) as GrepObservation;
    expect(named.matches).toEqual([join(ws, 'a.ts')]);
    const bad = (await tool.execute(tool.toAction({ pattern: '(' }), ctx(ws))) as GrepObservation;
    expect(bad).toMatchObject({ is_error: true });
    expect(bad.content![0]).toMatchObject({ text: expect.stringContaining('Invalid regex pattern') });
  });
});

describe('task_tracker', () => {
  it('plans and views the list kept in the conversation events', async () => {
    const events: Event[] = [];
    const tool = taskTrackerTool(() => events);
    const empty = (await tool.execute(tool.toAction({ command: 'view' }), ctx('/tmp'))) as TaskTrackerObservation;
    expect(empty).toMatchObject({ command: 'view', task_list: [], content: [{ text: 'No task list found. Use the "plan" command to create one.' }] });
    const planned = (await tool.execute(tool.toAction({ command: 'plan', task_list: [{ title: 'Read code', status: 'done' }, { title: 'Fix bug', notes: 'in parser', status: 'in_progress' }, { title: 'Test' }] }), ctx('/tmp'))) as TaskTrackerObservation;
    expect(planned).toMatchObject({ command: 'plan', content: [{ text: 'Task list has been updated with 3 item(s).' }] });
    events.push(parseEvent(observationEvent({ tool_name: 'task_tracker', tool_call_id: 'c', id: 'a' } as never, planned)));
    const view = (await tool.execute(tool.toAction({}), ctx('/tmp'))) as TaskTrackerObservation;
    expect(view.task_list).toEqual([
      { title: 'Read code', notes: '', status: 'done' },
      { title: 'Fix bug', notes: 'in parser', status: 'in_progress' },
      { title: 'Test', notes: '', status: 'todo' },
    ]);
    expect(view.content![0]).toMatchObject({ text: '# Task List\n\n1. ✅ Read code\n\n2. 🔄 Fix bug\n   in parser\n\n3. ⏳ Test' });
    expect(() => tool.toAction({ command: 'plan', task_list: [{ title: 'x', status: 'later' }] })).toThrow(ToolArgumentError);
    expect(() => tool.toAction({ command: 'delete' })).toThrow(ToolArgumentError);
  });
});
