// Kubernetes label selectors (`a=b,c!=d,e in (x,y),f notin (z),g,!h,n>3`), parsed the way
// apimachinery's labels.Parse does, so that a selector SqliteStore accepts is one the API server
// accepts too and matches the same objects. Bad syntax is an `Invalid` at loc ['labelSelector'].
import { Invalid } from '../api/errors.ts';

export type LabelOperator = 'Equals' | 'NotEquals' | 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'GreaterThan' | 'LessThan';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  /** One value for Equals/NotEquals/GreaterThan/LessThan, one or more for In/NotIn, none otherwise. */
  values: string[];
}

export type Labels = Readonly<Record<string, string>> | undefined;

type Token =
  | { kind: 'ident'; text: string }
  | { kind: 'op'; text: '!' | '!=' | '=' | '==' | '>' | '<' | '(' | ')' | ',' }
  | { kind: 'end'; text: 'end of string' };

const SPECIAL = new Set(['=', '!', '(', ')', ',', '<', '>']);
const WHITESPACE = new Set([' ', '\t', '\r', '\n']);
const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const INTEGER = /^[+-]?\d+$/;

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i]!;
    if (WHITESPACE.has(c)) {
      i++;
    } else if (SPECIAL.has(c)) {
      const two = input.slice(i, i + 2);
      const text = two === '!=' || two === '==' ? two : c;
      tokens.push({ kind: 'op', text: text as Extract<Token, { kind: 'op' }>['text'] });
      i += text.length;
    } else {
      let j = i;
      while (j < input.length && !SPECIAL.has(input[j]!) && !WHITESPACE.has(input[j]!)) j++;
      tokens.push({ kind: 'ident', text: input.slice(i, j) });
      i = j;
    }
  }
  tokens.push({ kind: 'end', text: 'end of string' });
  return tokens;
}

function invalid(selector: string, why: string): Invalid {
  return new Invalid([{ loc: ['labelSelector'], msg: `unable to parse requirement in "${selector}": ${why}`, type: 'value_error' }]);
}

function checkKey(key: string): string | undefined {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
    return `key "${key}": prefix must be a DNS subdomain`;
  }
  if (name.length === 0 || name.length > 63 || !NAME.test(name)) {
    return `key "${key}": name must be 1-63 alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric`;
  }
  return undefined;
}

function checkValue(value: string): string | undefined {
  if (value === '' || (value.length <= 63 && NAME.test(value))) return undefined;
  return `value "${value}": must be at most 63 alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric`;
}

/** Parses a selector; the empty string (or only whitespace) selects everything. Throws `Invalid`. */
export function parseLabelSelector(selector: string): LabelRequirement[] {
  const tokens = tokenize(selector);
  let pos = 0;
  const peek = (): Token => tokens[pos]!;
  const take = (): Token => tokens[Math.min(pos++, tokens.length - 1)]!;
  const fail = (why: string): never => {
    throw invalid(selector, why);
  };

  const values = (): string[] => {
    if (take().text !== '(') fail(`expected '(' after set operator`);
    const set = new Set<string>();
    // "()", "(,a)" and "(a,)" all include the empty value, as in apimachinery.
    let expectValue = true;
    for (;;) {
      const t = take();
      if (t.kind === 'ident' && expectValue) {
        set.add(t.text);
        expectValue = false;
      } else if (t.text === ',') {
        if (expectValue) set.add('');
        expectValue = true;
      } else if (t.text === ')') {
        if (expectValue) set.add('');
        return [...set];
      } else {
        return fail(`found '${t.text}', expected: ',', ')' or a value`);
      }
    }
  };

  const requirement = (): LabelRequirement => {
    const negated = peek().text === '!';
    if (negated) take();
    const keyTok = take();
    if (keyTok.kind !== 'ident') return fail(`found '${keyTok.text}', expected: a label key`);
    const key = keyTok.text;
    const keyError = checkKey(key);
    if (keyError) fail(keyError);
    if (negated) return { key, operator: 'DoesNotExist', values: [] };
    const next = peek();
    if (next.kind === 'end' || next.text === ',') return { key, operator: 'Exists', values: [] };
    const opTok = take();
    let operator: LabelOperator;
    if (opTok.text === '=' || opTok.text === '==') operator = 'Equals';
    else if (opTok.text === '!=') operator = 'NotEquals';
    else if (opTok.text === '>') operator = 'GreaterThan';
    else if (opTok.text === '<') operator = 'LessThan';
    else if (opTok.kind === 'ident' && opTok.text === 'in') operator = 'In';
    else if (opTok.kind === 'ident' && opTok.text === 'notin') operator = 'NotIn';
    else return fail(`found '${opTok.text}', expected one of: =, ==, !=, in, notin, >, <`);
    let vals: string[];
    if (operator === 'In' || operator === 'NotIn') {
      vals = values();
    } else {
      const v = peek();
      if (v.kind === 'end' || v.text === ',') vals = [''];
      else if (v.kind === 'ident') vals = [take().text];
      else return fail(`found '${v.text}', expected: a value`);
    }
    for (const v of vals) {
      const valueError = checkValue(v);
      if (valueError) fail(valueError);
      if ((operator === 'GreaterThan' || operator === 'LessThan') && !INTEGER.test(v)) {
        fail(`value "${v}" for '${opTok.text}' must be an integer`);
      }
    }
    return { key, operator, values: vals };
  };

  const out: LabelRequirement[] = [];
  if (peek().kind === 'end') return out;
  for (;;) {
    out.push(requirement());
    const t = take();
    if (t.kind === 'end') return out;
    if (t.text !== ',') fail(`found '${t.text}', expected: ',' or end of string`);
    const after = peek();
    if (after.kind !== 'ident' && after.text !== '!') fail(`found '${after.text}', expected: a requirement after ','`);
  }
}

/** Whether labels satisfy every requirement (an empty list matches everything). */
export function matchesLabelSelector(requirements: readonly LabelRequirement[], labels: Labels): boolean {
  return requirements.every((r) => matchesRequirement(r, labels));
}

function matchesRequirement(r: LabelRequirement, labels: Labels): boolean {
  const has = labels !== undefined && Object.hasOwn(labels, r.key);
  const value = has ? labels[r.key]! : undefined;
  switch (r.operator) {
    case 'Equals':
    case 'In':
      return value !== undefined && r.values.includes(value);
    case 'NotEquals':
    case 'NotIn':
      return value === undefined || !r.values.includes(value);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'GreaterThan':
    case 'LessThan': {
      if (value === undefined || !INTEGER.test(value)) return false;
      const diff = BigInt(value) - BigInt(r.values[0]!);
      return r.operator === 'GreaterThan' ? diff > 0n : diff < 0n;
    }
  }
}

/** Parses once and returns a predicate; undefined or empty selects everything. Throws `Invalid`. */
export function labelSelectorMatcher(selector: string | undefined): (labels: Labels) => boolean {
  const requirements = selector ? parseLabelSelector(selector) : [];
  return (labels) => matchesLabelSelector(requirements, labels);
}
