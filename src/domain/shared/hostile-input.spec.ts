import { cutShort, hostileValueProblem, isStorableText, jsonBeyondBounds, jsonNestsDeeperThan, MAX_JSON_DEPTH } from './hostile-input';

describe('isStorableText', () => {
  it.each(['', 'plain', 'Zoë', '🌴 pair', '\ud83c\udf34', 'tab\tand\nnewline', '\u0001'])('keeps %j', (text) => {
    expect(isStorableText(text)).toBe(true);
  });

  it.each(['\u0000', 'a\u0000', '\ud800', 'x\ud800y', '\udc00', '\udc00\ud800', '🌴\ud800'])('refuses %j', (text) => {
    expect(isStorableText(text)).toBe(false);
  });
});

describe('cutShort', () => {
  it('keeps text that fits', () => {
    expect(cutShort('abc', 3)).toBe('abc');
    expect(cutShort('', 0)).toBe('');
  });

  it('cuts to the length asked, the last unit an ellipsis', () => {
    expect(cutShort('abcdef', 4)).toBe('abc…');
  });

  it('never leaves half of a surrogate pair', () => {
    for (let max = 1; max <= 12; max++) {
      const cut = cutShort('😀'.repeat(10), max);
      expect(cut.length).toBeLessThanOrEqual(max);
      expect(isStorableText(cut)).toBe(true);
    }
    expect(cutShort('a😀b', 3)).toBe('a…');
  });
});

describe('jsonNestsDeeperThan', () => {
  const nested = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

  it('counts objects and arrays, up to the limit and past it', () => {
    expect(jsonNestsDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonNestsDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(jsonNestsDeeperThan('['.repeat(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(jsonNestsDeeperThan('[[1],[2],{"a":[3]}]', 3)).toBe(false);
    expect(jsonNestsDeeperThan('[[1],[2],{"a":[3]}]', 2)).toBe(true);
  });

  it('skips brackets inside strings, escaped quotes included', () => {
    expect(jsonNestsDeeperThan(JSON.stringify({ a: '['.repeat(500) }), 2)).toBe(false);
    expect(jsonNestsDeeperThan(JSON.stringify({ a: '"[[[\\"{{{' }), 1)).toBe(false);
    expect(jsonNestsDeeperThan(`{"a":"\\\\"}`, 1)).toBe(false);
    expect(jsonNestsDeeperThan(`{"a":"\\\\",[[]]}`, 2)).toBe(true);
  });
});

describe('jsonBeyondBounds', () => {
  const values = (text: string) => {
    // The smallest bound the text stays within.
    let bound = 0;
    while (jsonBeyondBounds(text, { depth: MAX_JSON_DEPTH, values: bound }) === 'values') bound++;
    return bound;
  };

  it('counts containers and the members and elements in them', () => {
    expect(values('{}')).toBe(1);
    expect(values('[]')).toBe(1);
    expect(values('[ ]')).toBe(1);
    expect(values('[0]')).toBe(2);
    expect(values('[0,0,0]')).toBe(4);
    expect(values('{"a":1,"b":"x"}')).toBe(3);
    expect(values('[{},{}]')).toBe(5);
    expect(values(' [ {} , { } ] ')).toBe(5);
    expect(values('"text"')).toBe(0);
  });

  it('skips commas and brackets inside strings', () => {
    expect(values(JSON.stringify({ a: ',,,[[{{' }))).toBe(2);
    expect(values(JSON.stringify(['a\\",[', 'b']))).toBe(3);
  });

  it('refuses many small values, the shape that costs the most memory per byte', () => {
    const hostile = `[${Array(100_000).fill('{}').join(',')}]`;
    expect(jsonBeyondBounds(hostile, { depth: MAX_JSON_DEPTH, values: 10_000 })).toBe('values');
    expect(jsonBeyondBounds(hostile, { depth: MAX_JSON_DEPTH, values: 200_001 })).toBeUndefined();
  });

  it('reads UTF-8 bytes as it reads text', () => {
    const text = JSON.stringify({ name: 'Zoë, [née] “Ω”', tags: ['ä,[', 'ß'] });
    const bytes = new TextEncoder().encode(text);
    for (const bound of [4, 5, 6, 7]) {
      expect(jsonBeyondBounds(bytes, { depth: 8, values: bound })).toBe(jsonBeyondBounds(text, { depth: 8, values: bound }));
    }
    expect(jsonBeyondBounds(bytes, { depth: 8, values: 6 })).toBeUndefined();
    expect(jsonBeyondBounds(bytes, { depth: 8, values: 5 })).toBe('values');
  });

  it('names depth when nesting is what goes beyond', () => {
    expect(jsonBeyondBounds('[[[[1]]]]', { depth: 3, values: 100 })).toBe('depth');
    expect(jsonBeyondBounds('[[[[1]]]]', { depth: 4, values: 100 })).toBeUndefined();
  });
});

describe('hostileValueProblem', () => {
  it('finds nothing in ordinary values', () => {
    expect(hostileValueProblem({ a: [1, 'two', { three: null }], b: true })).toBeUndefined();
    expect(hostileValueProblem('text')).toBeUndefined();
    expect(hostileValueProblem(null)).toBeUndefined();
  });

  it('names the first unstorable string by its path, root included', () => {
    expect(hostileValueProblem({ a: 'ok', b: [{ c: 'x\u0000' }] })).toBe('b[0].c: text must not contain U+0000 or an unpaired UTF-16 surrogate');
    expect(hostileValueProblem(['\ud800'])).toBe('[0]: text must not contain U+0000 or an unpaired UTF-16 surrogate');
    expect(hostileValueProblem('\u0000')).toBe('body: text must not contain U+0000 or an unpaired UTF-16 surrogate');
    expect(hostileValueProblem({ topic: '\u0000' }, 'query')).toBe('query.topic: text must not contain U+0000 or an unpaired UTF-16 surrogate');
  });

  it('refuses field names that are unstorable or name object machinery', () => {
    expect(hostileValueProblem({ a: { 'k\u0000': 1 } })).toBe("a: a field name's text must not contain U+0000 or an unpaired UTF-16 surrogate");
    for (const key of ['constructor', 'prototype', '__proto__']) {
      expect(hostileValueProblem(JSON.parse(`{"a":[{"${key}":1}]}`))).toBe(`a[0].${key}: unknown field`);
    }
  });

  it('refuses nesting past the bound without recursion', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 1_000_000; i++) deep = [deep];
    expect(hostileValueProblem(deep)).toBe(`${'[0]'.repeat(MAX_JSON_DEPTH)}: nested deeper than ${MAX_JSON_DEPTH} levels`);
    let ok: unknown = 'leaf';
    for (let i = 0; i < MAX_JSON_DEPTH; i++) ok = { a: ok };
    expect(hostileValueProblem(ok)).toBeUndefined();
  });
});
