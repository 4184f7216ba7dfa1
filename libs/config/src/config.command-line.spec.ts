import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandLineDir, commandLinePath } from './config.command-line.js';

describe('commandLineDir', () => {
  const root = mkdtempSync(join(tmpdir(), 'sb-cmdline-'));
  const checkout = join(root, 'switchboard');
  const project = join(root, 'project');
  mkdirSync(checkout);
  mkdirSync(project);
  const underNpm = { npm_lifecycle_event: 'start', npm_package_json: join(checkout, 'package.json'), INIT_CWD: project };

  it('is the directory npm was run from while the CLI runs where npm put it (npm start)', () => {
    expect(commandLineDir(underNpm, checkout)).toBe(project);
    expect(commandLinePath('../project/sb.yaml', underNpm, checkout)).toBe(join(root, 'project', 'sb.yaml'));
    expect(commandLinePath('sb.yaml', underNpm, checkout)).toBe(join(project, 'sb.yaml'));
  });

  it('is the working directory without npm, or where a script or its child moved on', () => {
    expect(commandLineDir({}, checkout)).toBe(checkout);
    expect(commandLineDir({ INIT_CWD: project }, checkout)).toBe(checkout);
    expect(commandLineDir({ ...underNpm, npm_lifecycle_event: undefined }, checkout)).toBe(checkout);
    const elsewhere = join(root, 'elsewhere');
    expect(commandLineDir(underNpm, elsewhere)).toBe(elsewhere);
    expect(commandLinePath('/etc/sb.yaml', underNpm, checkout)).toBe('/etc/sb.yaml');
  });

  it('knows the package directory named through a symlink', () => {
    const link = join(root, 'link');
    symlinkSync(checkout, link);
    expect(commandLineDir({ ...underNpm, npm_package_json: join(link, 'package.json') }, checkout)).toBe(project);
  });
});
