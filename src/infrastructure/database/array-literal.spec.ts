import { arrayLiteral } from './array-literal';

// node-postgres's own formatting of a parameter, which arrayLiteral stands in for.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { prepareValue } = require('pg/lib/utils') as { prepareValue: (value: unknown) => unknown };

describe('arrayLiteral', () => {
  const arrays: unknown[][] = [
    [],
    ['5b2f0a6e-3c3d-4f6e-9a2b-0c1d2e3f4a5b', '604832c7-7416-4200-a9d2-24b530cad597'],
    ['', 'NULL', 'null', ' padded ', 'a,b', '{braces}', 'new\nline', 'tab\t', 'o’Brien', '€ ü 😀'],
    ['say "hi"', 'back\\slash', '\\"', '"', '\\', 'both \\ and "'],
    [null, 'a', undefined, null],
    [0, -1, 42, 3.25, 1e21, Number.NaN, Number.POSITIVE_INFINITY],
    [true, false, null],
    ['mixed', 7, false, null],
  ];

  it.each(arrays.map((values) => [JSON.stringify(values), values]))('gives the text node-postgres gives for %s', (_, values) => {
    expect(arrayLiteral(values as unknown[])).toBe(prepareValue(values));
  });

  it('leaves to node-postgres what it does not format: nested arrays, objects, dates, buffers, bigints', () => {
    for (const odd of [[['a']], [{ a: 1 }], [new Date(0)], [Buffer.from('a')], [BigInt(1)], ['a', ['b']]]) {
      expect(arrayLiteral(odd)).toBeUndefined();
    }
  });
});
