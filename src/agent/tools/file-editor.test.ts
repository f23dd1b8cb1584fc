import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FileEditorObservation } from '../../api/events/index.ts';
import { createMasker } from '../mask.ts';
import { fileEditorTool } from './file-editor.ts';
import { observationText } from './output.ts';
import { ToolArgumentError } from './tool.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function setup(secrets: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'editor-'));
  dirs.push(dir);
  const tool = fileEditorTool();
  const run = async (args: Record<string, unknown>) => {
    const observation = (await tool.execute(tool.toAction(args), { workspaceDir: dir, mask: createMasker(secrets) })) as FileEditorObservation;
    return { observation, text: observationText(observation) };
  };
  return { dir, tool, run };
}

describe('file_editor', () => {
  it('creates, views, replaces, inserts and undoes, with whole files before and after each edit', async () => {
    const { dir, run } = setup();
    const path = join(dir, 'a', 'b.txt');
    const created = await run({ command: 'create', path, file_text: 'one\ntwo\nthree' });
    expect(created.observation).toMatchObject({ kind: 'FileEditorObservation', command: 'create', path, prev_exist: false, old_content: null, new_content: 'one\ntwo\nthree', is_error: false });
    expect(created.text).toBe(`File created successfully at: ${path}`);
    expect((await run({ command: 'view', path })).text).toBe(`Here's the result of running \`cat -n\` on ${path}:\n     1\tone\n     2\ttwo\n     3\tthree`);
    expect((await run({ command: 'view', path, view_range: [2, -1] })).text).toContain('     2\ttwo\n     3\tthree');
    expect((await run({ command: 'view', path, view_range: [2, 2] })).text).not.toContain('three');
    const replaced = await run({ command: 'str_replace', path, old_str: 'two', new_str: 'TWO' });
    expect(replaced.observation).toMatchObject({ prev_exist: true, old_content: 'one\ntwo\nthree', new_content: 'one\nTWO\nthree' });
    expect(replaced.text).toContain(`a snippet of ${path}:\n     1\tone\n     2\tTWO\n     3\tthree\nReview the changes`);
    await run({ command: 'insert', path, insert_line: 1, new_str: 'one and a half' });
    expect(readFileSync(path, 'utf8')).toBe('one\none and a half\nTWO\nthree');
    await run({ command: 'insert', path, insert_line: 0, new_str: 'zero' });
    expect(readFileSync(path, 'utf8')).toBe('zero\none\none and a half\nTWO\nthree');
    await run({ command: 'undo_edit', path });
    await run({ command: 'undo_edit', path });
    expect(readFileSync(path, 'utf8')).toBe('one\nTWO\nthree');
    await run({ command: 'str_replace', path, old_str: '\nTWO' }); // no new_str: deletion
    expect(readFileSync(path, 'utf8')).toBe('one\nthree');
  });

  it('undoing a create removes the file', async () => {
    const { dir, run } = setup();
    const path = join(dir, 'new.txt');
    await run({ command: 'create', path, file_text: 'x' });
    expect((await run({ command: 'undo_edit', path })).observation.is_error).toBe(false);
    expect(existsSync(path)).toBe(false);
  });

  it('lists a directory two levels deep without hidden items', async () => {
    const { dir, run } = setup();
    mkdirSync(join(dir, 'src', 'deep', 'deeper'), { recursive: true });
    mkdirSync(join(dir, '.git'));
    writeFileSync(join(dir, 'src', 'main.ts'), '');
    writeFileSync(join(dir, 'src', 'deep', 'deeper', 'hidden-by-depth.ts'), '');
    const { text } = await run({ command: 'view', path: dir });
    expect(text).toContain('up to 2 levels deep');
    expect(text).toContain(`${join(dir, 'src')}/\n${join(dir, 'src', 'deep')}/\n${join(dir, 'src', 'main.ts')}`);
    expect(text).not.toContain('.git');
    expect(text).not.toContain('hidden-by-depth');
  });

  it('answers mistakes with clear errors the model can act on', async () => {
    const { dir, run, tool } = setup();
    const path = join(dir, 'f.txt');
    await run({ command: 'create', path, file_text: 'x\nx\ny' });
    expect((await run({ command: 'str_replace', path, old_str: 'x', new_str: 'z' })).text).toBe('ERROR:\nNo replacement was performed. Multiple occurrences of old_str `x` in lines 1, 2. Please ensure it is unique.');
    expect((await run({ command: 'str_replace', path, old_str: 'q', new_str: 'z' })).text).toMatch(/did not appear verbatim/);
    expect((await run({ command: 'str_replace', path, old_str: 'y', new_str: 'y' })).text).toMatch(/must be different/);
    expect((await run({ command: 'create', path, file_text: '' })).observation).toMatchObject({ is_error: true, prev_exist: true });
    expect((await run({ command: 'create', path: join(dir, 'g.txt') })).text).toMatch(/file_text.*required/);
    expect((await run({ command: 'view', path: join(dir, 'missing') })).text).toMatch(/does not exist/);
    expect((await run({ command: 'view', path, view_range: [5, 6] })).text).toMatch(/Invalid `view_range`/);
    expect((await run({ command: 'view', path: dir, view_range: [1, 2] })).text).toMatch(/not allowed when `path` points to a directory/);
    expect((await run({ command: 'insert', path, insert_line: 9, new_str: 'n' })).text).toMatch(/Invalid `insert_line` parameter: 9.*\[0, 3\]/);
    expect((await run({ command: 'str_replace', path: dir, old_str: 'a' })).text).toMatch(/is a directory/);
    expect((await run({ command: 'undo_edit', path: join(dir, 'other') })).text).toMatch(/No edit history/);
    writeFileSync(join(dir, 'bin'), Buffer.from([1, 0, 2]));
    expect((await run({ command: 'view', path: join(dir, 'bin') })).text).toMatch(/appears to be binary/);
    expect(() => tool.toAction({ command: 'view', path: 'relative.txt' })).toThrow(ToolArgumentError);
    expect(() => tool.toAction({ command: 'delete', path })).toThrow(/Unknown command/);
    expect(() => tool.toAction({ command: 'insert', path, insert_line: -1 })).toThrow(/insert_line/);
    expect(() => tool.toAction({ command: 'view', path, view_range: 'all' })).toThrow(/view_range/);
  });

  it('masks secret values in what it shows and in the recorded contents', async () => {
    const { dir, run } = setup({ TOKEN: 'hunter2-token' });
    const path = join(dir, 'cfg');
    writeFileSync(path, 'token=hunter2-token\n');
    const r = await run({ command: 'str_replace', path, old_str: 'token=', new_str: 'TOKEN=' });
    expect(readFileSync(path, 'utf8')).toBe('TOKEN=hunter2-token\n');
    expect(JSON.stringify(r.observation)).not.toContain('hunter2-token');
    expect(r.observation.new_content).toBe('TOKEN=<secret-hidden>\n');
  });

  it('shows only part of a huge file and says how to see the rest', async () => {
    const { dir, run } = setup();
    const path = join(dir, 'big.txt');
    writeFileSync(path, Array.from({ length: 10_000 }, (_, i) => `line ${i + 1}`).join('\n'));
    const { text } = await run({ command: 'view', path });
    expect(text.length).toBeLessThan(32_000);
    expect(text).toContain('response clipped');
    expect(text).toContain('grep -n');
  });
});
