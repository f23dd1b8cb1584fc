import { describe, expect, it } from 'vitest';
import { Invalid } from '../api/errors.ts';
import { labelSelectorMatcher, parseLabelSelector } from './label-selector.ts';

describe('parseLabelSelector', () => {
  it.each([
    ['', []],
    ['   ', []],
    ['a=b', [{ key: 'a', operator: 'Equals', values: ['b'] }]],
    ['a==b', [{ key: 'a', operator: 'Equals', values: ['b'] }]],
    ['a!=b', [{ key: 'a', operator: 'NotEquals', values: ['b'] }]],
    ['a=', [{ key: 'a', operator: 'Equals', values: [''] }]],
    ['a', [{ key: 'a', operator: 'Exists', values: [] }]],
    ['!a', [{ key: 'a', operator: 'DoesNotExist', values: [] }]],
    ['n>3', [{ key: 'n', operator: 'GreaterThan', values: ['3'] }]],
    ['n < 3', [{ key: 'n', operator: 'LessThan', values: ['3'] }]],
    ['a in (x, y)', [{ key: 'a', operator: 'In', values: ['x', 'y'] }]],
    ['a notin (x)', [{ key: 'a', operator: 'NotIn', values: ['x'] }]],
    ['a in ()', [{ key: 'a', operator: 'In', values: [''] }]],
    ['a in (x,)', [{ key: 'a', operator: 'In', values: ['x', ''] }]],
    ['a in (in, notin)', [{ key: 'a', operator: 'In', values: ['in', 'notin'] }]],
    [
      'agentyard.dev/owner = u-1 , !x, tier in (a,b)',
      [
        { key: 'agentyard.dev/owner', operator: 'Equals', values: ['u-1'] },
        { key: 'x', operator: 'DoesNotExist', values: [] },
        { key: 'tier', operator: 'In', values: ['a', 'b'] },
      ],
    ],
  ])('%j', (selector, want) => {
    expect(parseLabelSelector(selector)).toEqual(want);
  });

  it.each([
    'a=b,',
    ',a',
    'a=b=c',
    'a in x',
    'a in (x',
    'a in (x y)',
    'a notin',
    '!a=b',
    'a b',
    '=b',
    'a>x',
    'a=(b)',
    'Bad Key=1',
    '-a=b',
    'UPPER.example.com/a=b',
    'a=-b',
    `a=${'v'.repeat(64)}`,
    `${'k'.repeat(64)}=v`,
  ])('rejects %j as Invalid at labelSelector', (selector) => {
    try {
      parseLabelSelector(selector);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(Invalid);
      expect((err as Invalid).detail[0]?.loc).toEqual(['labelSelector']);
      expect((err as Invalid).detail[0]?.msg).toContain(selector.slice(0, 10));
    }
  });
});

describe('labelSelectorMatcher', () => {
  const labels = { app: 'web', tier: 'front', n: '5', empty: '' };
  it.each([
    [undefined, true],
    ['', true],
    ['app=web', true],
    ['app=db', false],
    ['app!=db', true],
    ['missing!=x', true],
    ['app in (db,web)', true],
    ['app notin (db,web)', false],
    ['missing notin (x)', true],
    ['missing in (x)', false],
    ['tier', true],
    ['missing', false],
    ['!missing', true],
    ['!tier', false],
    ['n>4', true],
    ['n>5', false],
    ['n<6', true],
    ['app>1', false],
    ['missing<9', false],
    ['empty=', true],
    ['empty in ()', true],
    ['app=web,tier=back', false],
    ['app=web,tier=front,!missing', true],
  ])('%j → %s', (selector, want) => {
    expect(labelSelectorMatcher(selector)(labels)).toBe(want);
  });

  it('treats an object without labels as having none', () => {
    expect(labelSelectorMatcher('!a')(undefined)).toBe(true);
    expect(labelSelectorMatcher('a!=b')(undefined)).toBe(true);
    expect(labelSelectorMatcher('a')(undefined)).toBe(false);
  });

  it('does not see inherited properties as labels', () => {
    expect(labelSelectorMatcher('constructor')({})).toBe(false);
  });
});
