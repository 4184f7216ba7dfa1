import type { ServerResponse } from 'node:http';
import { closestKey } from '@switchboard/config';
import { sendError } from './json-response.js';

export interface ParamProblem {
  param: string;
  message: string;
}

/**
 * One problem per query parameter the endpoint does not take. They are refused, not ignored:
 * a misspelt filter (`principle=`) dropped would answer with the whole log, which reads like
 * the filtered answer. Named with the accepted ones, and the one most likely meant, as the
 * config's and the policy's unknown keys are (closestKey). `none` says why when it takes none.
 */
export function unknownParamProblems(query: Record<string, unknown>, known: readonly string[], none = 'this endpoint takes none'): ParamProblem[] {
  return Object.keys(query)
    .filter((param) => !known.includes(param))
    .map((param) => {
      if (known.length === 0) return { param, message: `unknown parameter; ${none}` };
      const meant = closestKey(param, known);
      return { param, message: `unknown parameter${meant ? ` (did you mean '${meant}'?)` : ''}; known: ${known.join(', ')}` };
    });
}

/** The 400 for bad query parameters; its message names the unknown ones, the problems say each. */
export function sendParamProblems(res: ServerResponse, problems: readonly ParamProblem[]): void {
  const unknown = problems.filter((p) => p.message.startsWith('unknown parameter')).map((p) => p.param);
  const message = `invalid query parameters${unknown.length > 0 ? `: unknown ${unknown.join(', ')}` : ''}`;
  sendError(res, 400, message, [...problems]);
}
