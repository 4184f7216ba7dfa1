import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import { auditRowJson } from '@switchboard/audit';
import { AuditQuery, type AuditRow } from '@switchboard/audit';
import { inReadSnapshot, noteUnmatchedFilters, withAuditReader } from './audit-reader.js';
import { COMMON_OPTIONS, loadCommandConfig, parseCommandArgs, printUsage } from './command-args.js';
import { CommandError, usageError } from './command-error.js';
import { csvHeader, csvRow } from './csv.js';
import { exportNotes } from './resume-notes.js';
import { refuseDataDirOutput } from './output-path.js';
import { FILTER_OPTIONS, parseFilters } from './filters.js';
import { ChunkedOutput, OutputError, isBrokenPipe } from './output.js';

const OPTIONS = {
  ...COMMON_OPTIONS,
  ...FILTER_OPTIONS,
  format: { type: 'string' },
  output: { type: 'string', short: 'o' },
} as const;

const FORMATS = {
  jsonl: { header: '', line: (row: AuditRow) => `${JSON.stringify(auditRowJson(row))}\n` },
  csv: { header: csvHeader(), line: csvRow },
};

/** What `audit export` reads of its arguments; bad usage throws. */
export function readArguments(args: string[]) {
  const { values } = parseCommandArgs(args, OPTIONS);
  if (values.help) return { values, format: undefined, filter: {} };
  if (values.format !== 'jsonl' && values.format !== 'csv') {
    throw usageError(`--format ${values.format === undefined ? 'is required' : `'${values.format}'`}: expected jsonl or csv`);
  }
  return { values, format: FORMATS[values.format], filter: parseFilters(values) };
}

/**
 * `audit export`: every matching row, oldest first, streamed in chunks (constant memory
 * however large the log) to stdout or `--output FILE`, as the log was when it began; then,
 * on stderr, how many and the id to resume from (resume-notes.ts). stdout is the data only.
 */
export async function run(args: string[], usage: string): Promise<number> {
  const { values, format, filter } = readArguments(args);
  if (values.help || !format) return printUsage(usage);
  const config = loadCommandConfig(values);

  if (values.output !== undefined) refuseDataDirOutput(values.output, config.dataDir, ', which holds the audit log itself; write the export elsewhere');

  return withAuditReader(config, async (dataSource) => {
    const target = values.output === undefined ? undefined : await openOutputFile(values.output);
    const out = new ChunkedOutput(target ?? process.stdout);
    try {
      // One read snapshot for every page: retention pruning (or a second daemon) committing
      // while a large export runs would otherwise leave a gap in the exported chain, rows
      // the export had not reached yet gone with no trace of them in the file.
      let exported = 0;
      const query = new AuditQuery(dataSource);
      const head = await inReadSnapshot(dataSource, async () => {
        // The snapshot's newest id, read first: every row up to it is one this export read.
        const newest = await query.newestId();
        await out.write(format.header);
        for await (const row of query.rows(filter, 'asc')) {
          await out.write(format.line(row));
          exported++;
        }
        return newest;
      });
      await out.end(target !== undefined);
      if (exported === 0) await noteUnmatchedFilters(dataSource, filter);
      // Only once the output is whole: an id to resume from after a failed write would skip rows.
      for (const note of exportNotes(filter, exported, head)) process.stderr.write(`${note}\n`);
    } catch (err) {
      if (target === undefined && isBrokenPipe(err)) return 0;
      if (err instanceof OutputError) {
        throw new CommandError(`writing ${values.output ?? 'stdout'} failed, the export is incomplete: ${err.message}`);
      }
      throw err;
    }
    return 0;
  });
}

/**
 * Opens (truncating) the output file, failing before any row is read if it cannot be. A new
 * file is the owner's only, as the database is: it holds the same rows (arguments, who
 * called what), and under the usual umask it was readable by every user of the machine.
 * An existing file keeps the mode its owner gave it.
 */
async function openOutputFile(file: string): Promise<Writable> {
  const stream = createWriteStream(file, { mode: 0o600 });
  try {
    await once(stream, 'open');
  } catch (err) {
    throw new CommandError(`cannot write ${file}: ${(err as Error).message}`);
  }
  return stream;
}
