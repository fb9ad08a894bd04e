/**
 * `--report <file>` of `replay` and `serve`: load the optional chart library up front, write the page.
 */
import { writeFile } from 'node:fs/promises';
import { loadChartRenderer, ReportDependencyError } from '../../report/charts.js';
import type { ChartRenderer } from '../../report/charts.js';
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

/** Write a report file; a {@link UserError} when it cannot be written. */
export async function writeReportFile(file: string, html: string, io: CommandIo): Promise<void> {
  try {
    await writeFile(file, html, 'utf8');
  } catch (err) {
    throw new UserError(`${file}: cannot write the report (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  io.err(`report: wrote ${file} (${Math.ceil(Buffer.byteLength(html) / 1024)} KiB)`);
}
