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
