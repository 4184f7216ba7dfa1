import { describe, expect, it } from 'vitest';
import { compileArgConditions, isPathWithin, normalizePosixPath, UNJUDGEABLE } from './arg-conditions.js';

describe('normalizePosixPath', () => {
  it.each([
    ['/srv/shared/../../etc/passwd', '/etc/passwd'],
    ['//srv/prod/x', '/srv/prod/x'],
    ['/srv//prod///x', '/srv/prod/x'],
    ['/srv/prod/./x', '/srv/prod/x'],
    ['/srv/prod/', '/srv/prod'],
    ['/srv/prod/.', '/srv/prod'],
    ['/srv/prod/x/..', '/srv/prod'],
    ['/..', '/'],
    ['/../../a', '/a'],
    ['/', '/'],
    ['///', '/'],
    ['/a/.../b', '/a/.../b'],
  ])('%s is %s', (path, normal) => {
    expect(normalizePosixPath(path)).toBe(normal);
  });

  it.each([['srv/prod'], ['./x'], ['../x'], [''], ['~/x'], ['/srv/a\0b'], ['/srv\\prod'], ['C:\\srv']])('%j is not an absolute POSIX path', (path) => {
    expect(normalizePosixPath(path)).toBeUndefined();
  });
});

describe('isPathWithin', () => {
  it.each<[unknown, string, boolean | typeof UNJUDGEABLE]>([
    ['/srv/prod', '/srv/prod', true],
    ['/srv/prod/', '/srv/prod', true],
    ['/srv/prod/x', '/srv/prod', true],
    ['//srv/prod/x', '/srv/prod', true],
    ['/srv/prod/./x', '/srv/prod', true],
    ['/srv/production', '/srv/prod', false],
    ['/srv/prod/../production/x', '/srv/prod', false],
    ['/srv/shared/../../etc/passwd', '/srv/shared', false],
    ['/srv', '/srv/prod', false],
    ['/etc/passwd', '/', true],
    ['/', '/', true],
    ['srv/prod/x', '/srv/prod', UNJUDGEABLE],
    ['/srv/prod/x\0', '/srv/prod', UNJUDGEABLE],
    ['/srv/prod\\x', '/srv/prod', UNJUDGEABLE],
    [['/srv/prod/x'], '/srv/prod', UNJUDGEABLE],
    [42, '/srv/prod', UNJUDGEABLE],
    [null, '/srv/prod', UNJUDGEABLE],
  ])('%j within %s: %s', (value, dir, verdict) => {
    expect(isPathWithin(value, dir)).toBe(verdict);
  });
});

describe('compileArgConditions', () => {
  it('is undefined without conditions', () => {
    expect(compileArgConditions(undefined, 'allow')).toBeUndefined();
    expect(compileArgConditions({}, 'deny')).toBeUndefined();
  });

  it('normalises the directory of pathWithin', () => {
    const within = compileArgConditions({ 'args.p': { pathWithin: '/srv/./a/../shared//' } }, 'allow')!;
    expect(within.matches({ p: '/srv/shared/x' })).toBe(true);
    expect(within.matches({ p: '/srv/a/x' })).toBe(false);
  });

  it('a value no test can judge: false for an allow, true for a deny or a confirm', () => {
    const when = { 'args.x': { eq: 'a' } };
    for (const odd of [['a'], { a: 1 }, 1, true]) {
      expect(compileArgConditions(when, 'allow')!.matches({ x: odd })).toBe(false);
      expect(compileArgConditions(when, 'deny')!.matches({ x: odd })).toBe(true);
      expect(compileArgConditions(when, 'confirm')!.matches({ x: odd })).toBe(true);
    }
  });

  it('a missing argument: eq, in, startsWith, pathWithin fail and notIn holds, whatever the effect', () => {
    for (const effect of ['allow', 'confirm', 'deny'] as const) {
      for (const test of [{ eq: 'a' }, { in: ['a'] }, { startsWith: 'a' }, { pathWithin: '/a' }]) {
        expect(compileArgConditions({ 'args.x': test }, effect)!.matches({})).toBe(false);
        expect(compileArgConditions({ 'args.x.y': test }, effect)!.matches({ x: {} })).toBe(false);
        // null is how hosts often send an argument they leave out: absent too.
        expect(compileArgConditions({ 'args.x': test }, effect)!.matches({ x: null })).toBe(false);
        expect(compileArgConditions({ 'args.x.y': test }, effect)!.matches({ x: null })).toBe(false);
      }
      expect(compileArgConditions({ 'args.x': { notIn: ['a'] } }, effect)!.matches({})).toBe(true);
      expect(compileArgConditions({ 'args.x': { notIn: ['a'] } }, effect)!.matches(undefined)).toBe(true);
    }
  });

  it('in with operands of several types judges a value of any of them', () => {
    const some = compileArgConditions({ 'args.x': { in: [1, 'one'] } }, 'deny')!;
    expect(some.matches({ x: 1 })).toBe(true);
    expect(some.matches({ x: 'one' })).toBe(true);
    expect(some.matches({ x: 'two' })).toBe(false);
    expect(some.matches({ x: 2 })).toBe(false);
    expect(some.matches({ x: false })).toBe(true); // a boolean: unjudgeable, the deny applies
  });

  it('paths read own properties only', () => {
    const proto = compileArgConditions({ 'args.constructor': { notIn: ['x'] } }, 'allow')!;
    expect(proto.matches({})).toBe(true); // missing, not Object
    expect(compileArgConditions({ 'args.constructor': { eq: 'x' } }, 'deny')!.matches({})).toBe(false);
    expect(compileArgConditions({ 'args.__proto__': { eq: 'x' } }, 'allow')!.matches(JSON.parse('{"__proto__":"x"}'))).toBe(true);
  });
});
