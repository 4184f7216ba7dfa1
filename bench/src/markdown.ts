/** Markdown tables and the number formats the report's tables share. */

export function table(headers: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}

export function formatMs(value: number): string {
  if (!Number.isFinite(value)) return '–';
  return value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0);
}

export function formatRate(value: number): string {
  return Number.isFinite(value) ? value.toFixed(0) : '–';
}

export function formatUs(value: number): string {
  return Number.isFinite(value) ? value.toFixed(0) : '–';
}

export function formatMb(value: number): string {
  return Number.isFinite(value) ? value.toFixed(1) : '–';
}

/** +1.23 / −0.40: a difference with its sign; – when not measured. */
export function signed(value: number, digits: number): string {
  if (!Number.isFinite(value)) return '–';
  const text = Math.abs(value).toFixed(digits);
  return Number(text) === 0 ? `±${text}` : `${value > 0 ? '+' : '−'}${text}`;
}
