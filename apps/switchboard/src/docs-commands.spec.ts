import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { USAGE, commandFirst, parseStartArgs } from './cli.js';
import { ARGUMENT_CHECKS } from './commands/argument-checks.js';
import { usagePart } from './commands/usage-part.js';
import type { CommandFamily } from './commands/index.js';

// Users copy these commands as they are, so each must be one the CLI takes: its options
// known, the ones it requires given, their values of the right form. Only the arguments
// are checked (as each command reads them first); nothing runs. One had drifted already:
// `audit export --decision limited`, without the --format it requires.
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const documents = ['README.md', ...readdirSync(join(repoRoot, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

const FAMILIES = Object.keys(ARGUMENT_CHECKS) as CommandFamily[];
const COMMAND = new RegExp(`(?:^|[\\s(\`])(?:npx )?switchboard ((?:${[...FAMILIES, 'start', 'stdio'].join('|')})(?=\\s|$).*)`);

interface DocCommand {
  where: string;
  /** What follows `switchboard`, as written. */
  text: string;
  /** Only the command's name, in a sentence: its arguments are not given. */
  named: boolean;
}

/**
 * The `switchboard ...` commands of a Markdown file: from code blocks (a line each, with
 * its `\` continuations) and from inline code (which may wrap across lines). A usage
 * synopsis ([optional] parts, `...`) is no command, and is left out.
 */
function commandsOf(document: string): DocCommand[] {
  const lines = readFileSync(join(repoRoot, document), 'utf8').split('\n');
  const found: DocCommand[] = [];
  const add = (line: number, code: string, inline = false) => {
    const match = COMMAND.exec(code);
    if (!match) return;
    const text = match[1].replace(/\s+#.*$/, '').trim();
    if (/[[\]]|\.\.\./.test(text.replace(/'[^']*'|"[^"]*"/g, "''"))) return;
    // In a sentence, `switchboard audit` or `switchboard audit digest` names a command.
    const named = inline && /^\S+(?: [a-z]+)?$/.test(text);
    found.push({ where: `${document}:${line}`, text, named });
  };
  // A paragraph's lines joined with spaces, where each starts: inline code may wrap.
  let prose: { line: number; text: string; offset: number }[] = [];
  let joined = '';
  const flushProse = () => {
    for (const span of joined.matchAll(/(`+)(.+?)\1/g)) {
      const line = prose.findLast((p) => p.offset <= span.index)!.line;
      add(line, span[2], true);
    }
    prose = [];
    joined = '';
  };
  for (let i = 0; i < lines.length; i++) {
    if (/^\s*```/.test(lines[i])) {
      flushProse();
      while (++i < lines.length && !/^\s*```/.test(lines[i])) {
        let code = lines[i];
        const start = i + 1;
        while (code.endsWith('\\') && i + 1 < lines.length) code = `${code.slice(0, -1)} ${lines[++i].trim()}`;
        add(start, code);
      }
      continue;
    }
    if (lines[i].trim() === '') flushProse();
    else {
      if (joined) joined += ' ';
      prose.push({ line: i + 1, text: lines[i].trim(), offset: joined.length });
      joined += lines[i].trim();
    }
  }
  flushProse();
  return found;
}

/**
 * Shell words, as sh would split them: quotes kept together and removed, a pipe, redirect
 * or `&&` ending the command. A placeholder in angle brackets (`<name>`) stands for a word.
 */
function shellWords(text: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  const source = text.replace(/<[A-Za-z][^<>\s]*>/g, 'placeholder');
  for (const char of source) {
    if (quote) {
      if (char === quote) quote = undefined;
      else word = (word ?? '') + char;
    } else if (char === "'" || char === '"') {
      quote = char;
      word ??= '';
    } else if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if ('|<>;&'.includes(char)) {
      break;
    } else {
      word = (word ?? '') + char;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** Why the CLI would refuse these arguments as bad usage; undefined when it takes them. */
function refusal(argv: string[]): string | undefined {
  try {
    const [family, subcommand, ...rest] = commandFirst(argv);
    if (Object.hasOwn(ARGUMENT_CHECKS, family)) {
      const check = ARGUMENT_CHECKS[family as CommandFamily];
      // `switchboard keys --help`: the family's part of the usage.
      if (subcommand === '--help' || subcommand === '-h') return undefined;
      if (subcommand === undefined || !Object.hasOwn(check, subcommand)) return `no ${family} command '${subcommand}'`;
      check[subcommand](rest);
      return undefined;
    }
    const { values, positionals } = parseStartArgs(argv);
    if (values.help || values.version) return undefined;
    return positionals[0] === 'start' || positionals[0] === 'stdio' ? undefined : `unknown command '${positionals[0]}'`;
  } catch (err) {
    return (err as Error).message;
  }
}

const commands = documents.flatMap(commandsOf);

describe('the switchboard commands of README.md and docs/', () => {
  it('are found, in code blocks and inline code', () => {
    expect(commands.length).toBeGreaterThan(40);
    expect(commands.some((c) => c.text.startsWith('audit export'))).toBe(true);
  });

  it.each(commands.map((c) => [c.where, c.text, c] as const))('%s: switchboard %s', (_where, text, { named }) => {
    const [family, subcommand] = shellWords(text);
    if (named && Object.hasOwn(ARGUMENT_CHECKS, family)) {
      // A family alone, or a family and one of its subcommands.
      if (subcommand !== undefined) expect(Object.keys(ARGUMENT_CHECKS[family as CommandFamily])).toContain(subcommand);
      return;
    }
    expect(refusal(shellWords(text))).toBeUndefined();
  });
});

describe('the check itself', () => {
  it('knows every subcommand the usage names, and no other', () => {
    const named = [...USAGE.matchAll(/^ {2}switchboard ([a-z]+) ([a-z]+)/gm)].map((m) => `${m[1]} ${m[2]}`).filter((c) => !c.startsWith('start') && !c.startsWith('stdio'));
    const checked = Object.entries(ARGUMENT_CHECKS).flatMap(([family, subcommands]) => Object.keys(subcommands).map((sub) => `${family} ${sub}`));
    expect(checked.sort()).toEqual(named.sort());
  });


  it('refuses what the CLI refuses: a missing required option, an unknown option or command, a bad value', () => {
    expect(refusal(shellWords('audit export --decision limited'))).toMatch(/--format is required/);
    expect(refusal(shellWords('keys create --roles dev'))).toMatch(/needs --name/);
    expect(refusal(shellWords('audit tail --nope'))).toMatch(/nope/);
    expect(refusal(shellWords('audit tail -n 0'))).toMatch(/-n\/--lines '0'/);
    expect(refusal(shellWords('keys frob'))).toMatch(/no keys command 'frob'/);
    expect(refusal(shellWords('keys --help'))).toBeUndefined();
    expect(refusal(shellWords('audit export --help'))).toBeUndefined();
    expect(refusal(shellWords('begin'))).toMatch(/unknown command/);
    expect(refusal(shellWords('audit digest --arguments \'{"path": "/etc/hosts"}\''))).toBeUndefined();
    expect(refusal(shellWords('secrets set --principal alice GITHUB_TOKEN < token.txt'))).toBeUndefined();
    expect(refusal(shellWords('keys revoke <name>'))).toBeUndefined();
    expect(refusal(shellWords('--config sw.yaml config check'))).toBeUndefined();
  });
});

/**
 * The README's list of commands (the first code block under "## Command line"): command ->
 * its lines there. `secrets list|delete ...` would stand for two commands, so it counts for both.
 */
function readmeSynopses(): Map<string, string[]> {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Command line\n'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)![1];
  const lines = new Map<string, string[]>();
  for (const line of block.split('\n')) {
    const match = /^switchboard ((?:start|stdio)|[a-z]+ [a-z|]+)(?=\s|$)(.*)$/.exec(line);
    if (!match) continue;
    const [family, subs] = match[1].split(' ');
    for (const command of subs === undefined ? [family] : subs.split('|').map((sub) => `${family} ${sub}`)) {
      lines.set(command, [...(lines.get(command) ?? []), line.replace(/\s+#.*$/, '')]);
    }
  }
  return lines;
}

/** The long options a command's --help names in its own entry (the notes' --config, --data-dir and FILTERS are said once, below the README's list too). */
function helpOptions(command: string): string[] {
  const entry = usagePart(USAGE, command).split('\n\n')[0];
  return [...new Set(entry.match(/--[a-z][a-z-]*/g) ?? [])].filter((o) => o !== '--config' && o !== '--data-dir').sort();
}

describe("the README's list of commands", () => {
  const synopses = readmeSynopses();
  const usageCommands = [...USAGE.matchAll(/^ {2}switchboard ([a-z]+(?: [a-z]+)?)/gm)].map((m) => m[1]);

  it.each(usageCommands)('has switchboard %s with every option its --help names, and no other', (command) => {
    const lines = synopses.get(command);
    expect(lines, `README.md lists no \`switchboard ${command}\``).toBeDefined();
    const documented = [...new Set(lines!.join(' ').match(/--[a-z][a-z-]*/g) ?? [])].filter((o) => o !== '--config' && o !== '--data-dir').sort();
    expect(documented).toEqual(helpOptions(command));
  });
});
