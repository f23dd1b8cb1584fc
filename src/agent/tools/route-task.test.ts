// The routing tool's reading of a classifier's answer and the messages it sends (the HTTP behaviour
// is in src/agent-server/route-task.test.ts).
import { describe, expect, it } from 'vitest';
import { classIndex, classifierMessages, directModel } from './route-task.ts';

describe('route_task_to_model parsing', () => {
  it('takes the first integer of a class answer when it numbers a class, else 0 (no silent default)', () => {
    expect(classIndex('2', 3)).toBe(2);
    expect(classIndex('Category 3, clearly.', 3)).toBe(3);
    expect(classIndex('0', 3)).toBe(0);
    expect(classIndex('4', 3)).toBe(0);
    expect(classIndex('-1', 3)).toBe(0);
    expect(classIndex('none', 3)).toBe(0);
  });

  it('reads a direct answer as JSON (fenced or not), else finds the longest profile name in it; case-insensitive, named as stored', () => {
    const names = ['fast', 'fast-vision', 'Coder'];
    expect(directModel('{"model": "coder"}', names)).toBe('Coder');
    expect(directModel('```json\n{"model": "FAST"}\n```', names)).toBe('fast');
    expect(directModel('{"model": "unknown"}', names)).toBeUndefined();
    expect(directModel('I would pick fast-vision here', names)).toBe('fast-vision');
    expect(directModel('no idea', names)).toBeUndefined();
  });

  it('sends a system turn and a non-empty user turn in both modes', () => {
    const byClass = classifierMessages({ classifier_model: 'c', classes: [{ description: 'UI', model: 'a' }, { description: 'rest', model: 'b' }], prompt_template: null, model_table: null }, 'user: hi');
    expect(byClass.map((m) => m.role)).toEqual(['system', 'user']);
    expect(byClass[0]!.content).toContain('1. UI\n2. rest');
    expect(byClass[1]!.content).toContain('user: hi');
    const direct = classifierMessages({ classifier_model: 'c', classes: [], prompt_template: 'T={{ instance_text }} M={{model_table}} X={{ other }}', model_table: 'a: b' }, 'user: hi');
    expect(direct[1]!.content).toBe('T=user: hi M=a: b X={{ other }}');
  });
});
