import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileEditorTool } from './file-editor.ts';
import { ToolArgumentError } from './tool.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'editor-'));
  dirs.push(dir);
  const tool = fileEditorTool();
  const run = (args: Record<string, unknown>) => tool.execute(tool.toAction(args), { workspaceDir: dir, mask: (t) => t });
  return { dir, tool, run };
}

describe('file_editor', () => {
  it('creates, views, replaces, inserts and undoes', async () => {
    const { dir, run } = setup();
    const path = join(dir, 'a', 'b.txt');
    const created = await run({ command: 'create', path, file_text: 'one\ntwo\nthree' });
    expect(created.observation).toMatchObject({ kind: 'FileEditorObservation', prev_exist: false, new_content: 'one\ntwo\nthree', is_error: false });
    expect((await run({ command: 'view', path })).text).toContain('     2\ttwo');
    expect((await run({ command: 'view', path, view_range: [2, 3] })).text).not.toContain('one');
    const replaced = await run({ command: 'str_replace', path, old_str: 'two', new_str: 'TWO' });
    expect(replaced.observation).toMatchObject({ old_content: 'one\ntwo\nthree', new_content: 'one\nTWO\nthree' });
    await run({ command: 'insert', path, insert_line: 1, new_str: 'one and a half' });
    expect(readFileSync(path, 'utf8')).toBe('one\none and a half\nTWO\nthree');
    await run({ command: 'undo_edit', path });
    expect(readFileSync(path, 'utf8')).toBe('one\nTWO\nthree');
    expect((await run({ command: 'view', path: dir })).text).toContain(`${join(dir, 'a')}/`);
  });

  it('answers mistakes with clear errors the model can act on', async () => {
    const { dir, run, tool } = setup();
    const path = join(dir, 'f.txt');
    await run({ command: 'create', path, file_text: 'x x' });
    expect((await run({ command: 'str_replace', path, old_str: 'x', new_str: 'y' })).text).toMatch(/Multiple occurrences/);
    expect((await run({ command: 'str_replace', path, old_str: 'z', new_str: 'y' })).text).toMatch(/did not appear verbatim/);
    expect((await run({ command: 'create', path, file_text: '' })).observation.is_error).toBe(true);
    expect((await run({ command: 'view', path: join(dir, 'missing') })).text).toMatch(/does not exist/);
    expect((await run({ command: 'undo_edit', path: join(dir, 'other') })).text).toMatch(/No edit history|does not exist/);
    expect(() => tool.toAction({ command: 'view', path: 'relative.txt' })).toThrow(ToolArgumentError);
    expect(() => tool.toAction({ command: 'delete', path })).toThrow(/Unknown command/);
  });
});
