import { describe, expect, it } from 'vitest';
import { compileUriTemplate } from './uri-template.js';

const matches = (template: string, uri: string) => compileUriTemplate(template).test(uri);

describe('compileUriTemplate', () => {
  it('simple {var} matches one path segment, not several', () => {
    expect(matches('users://{id}/profile', 'users://42/profile')).toBe(true);
    expect(matches('users://{id}/profile', 'users://42/x/profile')).toBe(false);
    expect(matches('users://{id}/profile', 'users://42?x=1/profile')).toBe(false);
  });

  it('{+path} matches across slashes', () => {
    expect(matches('file:///{+path}', 'file:///home/ada/notes/today.md')).toBe(true);
    expect(matches('file:///{+path}', 'file:///')).toBe(false);
    expect(matches('file:///{+path}', 'http:///home')).toBe(false);
  });

  it('query {?q} and continuation {&page} are optional', () => {
    const t = 'search://docs{?q,lang}{&page}';
    expect(matches(t, 'search://docs')).toBe(true);
    expect(matches(t, 'search://docs?q=mcp&lang=en')).toBe(true);
    expect(matches(t, 'search://docs?q=mcp&page=2')).toBe(true);
    expect(matches(t, 'search://docsx')).toBe(false);
  });

  it('path {/seg}, label {.ext}, params {;v} and fragment {#f}', () => {
    expect(matches('repo://main{/path*}', 'repo://main/src/index.ts')).toBe(true);
    expect(matches('repo://main{/path*}', 'repo://main')).toBe(true);
    expect(matches('img://{name}{.fmt}', 'img://logo.png')).toBe(true);
    expect(matches('map://{city}{;lat,lon}', 'map://paris;lat=48.8;lon=2.3')).toBe(true);
    expect(matches('doc://{id}{#section}', 'doc://7#intro')).toBe(true);
  });

  it('anchors the whole URI and treats regex characters as literals', () => {
    expect(matches('a.b://{x}', 'aXb://1')).toBe(false);
    expect(matches('a.b://{x}', 'a.b://1')).toBe(true);
    expect(matches('a.b://{x}', 'prefix-a.b://1')).toBe(false);
    expect(matches('(x)+://{y}', '(x)+://1')).toBe(true);
  });

  it('matches a template without expressions only exactly', () => {
    expect(matches('config://app', 'config://app')).toBe(true);
    expect(matches('config://app', 'config://application')).toBe(false);
  });

  it('treats a malformed template literally instead of throwing', () => {
    expect(matches('bad://{oops', 'bad://{oops')).toBe(true);
    expect(matches('bad://{oops', 'bad://x')).toBe(false);
  });

  it('ignores level-4 modifiers', () => {
    expect(matches('v://{var:3}/{list*}', 'v://abc/a,b,c')).toBe(true);
  });
});

/**
 * The backtracking RegExp the matcher replaced, kept here as the reference of what a
 * template matches: the automaton must agree with it on every URI short enough for it.
 */
function referencePattern(template: string): RegExp {
  const patterns: Record<string, string> = {
    '': '[^/?#]+', '+': '.+', '#': '(?:#.*)?', '/': '(?:/[^?#]*)?', '.': '(?:\\.[^/?#]*)?',
    ';': '(?:;[^/?#]*)?', '?': '(?:\\?[^#]*)?', '&': '(?:&[^#]*)?',
  };
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  let pattern = '';
  let pos = 0;
  while (pos < template.length) {
    const open = template.indexOf('{', pos);
    const close = open < 0 ? -1 : template.indexOf('}', open + 1);
    if (open < 0 || close < 0) {
      pattern += escape(template.slice(pos));
      break;
    }
    pattern += escape(template.slice(pos, open));
    const body = template.slice(open + 1, close);
    const operator = body.length > 0 && Object.hasOwn(patterns, body[0]) ? body[0] : '';
    pattern += /^[=,!@|]/.test(body) ? escape(template.slice(open, close + 1)) : patterns[operator];
    pos = close + 1;
  }
  return new RegExp(`^${pattern}$`);
}

describe('compileUriTemplate against a host that chooses the URI', () => {
  it('answers at once for a URI built to make a backtracking matcher run for minutes', () => {
    // Three reserved expressions and literals that almost match everywhere: the old RegExp
    // took 34 s for 8 KB of this and 285 s for 16 KB (a vitest timeout here), holding the event loop.
    const template = 'file:///{+a}/x/{+b}/y/{+c}.md';
    const uri = `file:///${'/x/y'.repeat(8_000)}.mdz`;
    expect(compileUriTemplate(template).test(uri)).toBe(false);
    expect(compileUriTemplate(template).test(`file:///${'/x/y'.repeat(8_000)}/x/b/y/c.md`)).toBe(true);
  });

  it('matches what the RegExp it replaced matches, on random templates and URIs', () => {
    const pieces = ['a', '/', '?', '#', '.', ';', '&', '=', 'x', '\n', '{v}', '{+v}', '{#v}', '{/v}', '{.v}', '{;v}', '{?v}', '{&v}', '{=v}', '{', '}'];
    const chars = ['a', 'x', '/', '?', '#', '.', ';', '&', '=', '\n', '{', '}', 'v'];
    let seed = 12345;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let round = 0; round < 3000; round++) {
      const template = Array.from({ length: 1 + random(6) }, () => pieces[random(pieces.length)]).join('');
      const reference = referencePattern(template);
      const matcher = compileUriTemplate(template);
      for (let k = 0; k < 10; k++) {
        // Half the URIs are the template's own literal text with the braces' contents varied.
        const uri = k % 2 === 0
          ? template.replace(/\{[^}]*\}/g, () => Array.from({ length: random(4) }, () => chars[random(chars.length)]).join(''))
          : Array.from({ length: random(10) }, () => chars[random(chars.length)]).join('');
        expect({ template, uri, match: matcher.test(uri) }).toEqual({ template, uri, match: reference.test(uri) });
      }
    }
  });
});
