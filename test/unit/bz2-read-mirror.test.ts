import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keyPatternRegExp } from '../../src/external/bz2-read-mirror.ts';

test('read_from patterns match keys as the engine expands them', () => {
  const cases: [string, string, boolean][] = [
    ['in/{a,d}.csv.bz2', 'in/a.csv.bz2', true],
    ['in/{a,d}.csv.bz2', 'in/c.csv', false],
    ['x/{01..10}.bz2', 'x/07.bz2', true],
    ['x/{01..10}.bz2', 'x/10.bz2', true],
    ['x/{01..10}.bz2', 'x/7.bz2', false],
    ['x/{01..10}.bz2', 'x/11.bz2', false],
    ['a/**.bz2', 'a/b/c.bz2', true],
    ['a/*.bz2', 'a/b/c.bz2', false],
    ['a/*.bz2', 'a/c.bz2', true],
    ['a/?.b+z2', 'a/x.b+z2', true],
    ['a/?.b+z2', 'a/xy.b+z2', false],
    ['a/(x).bz2', 'a/(x).bz2', true],
  ];
  for (const [pattern, key, expected] of cases)
    assert.equal(keyPatternRegExp(pattern).test(key), expected, `${pattern} ~ ${key}`);
});
