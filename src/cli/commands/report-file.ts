/**
 * `--report <file>` of `replay` and `serve`: load the optional chart library up front, write the page.
 */
import { access, constants, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { loadChartRenderer, ReportDependencyError } from '../../report/charts.js';
import type { ChartRenderer } from '../../report/charts.js';
import { parsePriceTable, PriceTableError } from '../../report/prices.js';
import type { PriceTable } from '../../report/prices.js';
import { UserError } from '../io.js';
import type { CommandIo } from '../io.js';

/** The chart renderer for `--report`, or a {@link UserError} that says what to install. */
export async function reportCharts(): Promise<ChartRenderer> {
  try {
    return await loadChartRenderer();
  } catch (err) {
    if (err instanceof ReportDependencyError) throw new UserError(err.message);
    throw err;
  }
}

/**
 * Check, before the run, that the report file can be written later: its directory exists and is
 * writable, and the file, if it exists, is a writable regular file. Creates nothing.
 *
 * @throws {UserError} naming the file and the system code (`ENOENT`, `ENOTDIR`, `EACCES`, `EISDIR`…)
 */
export async function checkReportWritable(file: string): Promise<void> {
  const fail = (code: string): never => {
    throw new UserError(`${file}: cannot write the report (${code}); nothing was run`);
  };
  const existing = await stat(file).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : fail(err.code ?? 'EACCES')));
  if (existing !== undefined) {
    if (existing.isDirectory()) fail('EISDIR');
    await access(file, constants.W_OK).catch((err: NodeJS.ErrnoException) => fail(err.code ?? 'EACCES'));
    return;
  }
  const dir = dirname(file);
  const parent = await stat(dir).catch((err: NodeJS.ErrnoException) => fail(err.code ?? 'ENOENT'));
  if (!parent.isDirectory()) fail('ENOTDIR');
  await access(dir, constants.W_OK | constants.X_OK).catch((err: NodeJS.ErrnoException) => fail(err.code ?? 'EACCES'));
}

/** Write a report file; a {@link UserError} when it cannot be written. */
export async function writeReportFile(file: string, html: string, io: CommandIo): Promise<void> {
  try {
    await writeFile(file, html, 'utf8');
  } catch (err) {
    throw new UserError(`${file}: cannot write the report (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  io.err(`report: wrote ${file} (${Math.ceil(Buffer.byteLength(html) / 1024)} KiB)`);
}

/**
 * Read `--prices <file>` (docs/report.md, "Money"): a JSON price table.
 *
 * @throws {UserError} when the file cannot be read, is not JSON or not the documented shape
 */
export async function readPriceTable(file: string): Promise<PriceTable> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UserError(`${file}: cannot read the price table (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UserError(`${file}: the price table is not JSON`);
  }
  try {
    return parsePriceTable(json);
  } catch (err) {
    if (err instanceof PriceTableError) throw new UserError(`${file}: ${err.message}`);
    throw err;
  }
}
