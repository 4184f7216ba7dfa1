import { elicitationSchemaProblems } from '@switchboard/inbox';
import type { Item } from '../relay.types.js';
import { elicitationMode } from './host-capability.js';
import { MAX_ELICITATION_ID_CHARS } from './url-elicitations.js';

/** Why an upstream's elicitation/create is not relayed: the audit row's rule and what the upstream is told (-32602). */
export interface ElicitationParamsProblem {
  rule: 'relay:invalid-schema' | 'relay:invalid-request';
  message: string;
}

/**
 * What is wrong with an elicitation/create request's params, undefined when nothing is.
 * Checked before it reaches a host or the inbox: a form's schema must be one a host can
 * render, and a URL elicitation needs a web URL to open and an id the gateway can keep.
 */
export function elicitationParamsProblem(params: Item): ElicitationParamsProblem | undefined {
  if (elicitationMode(params) === 'form') {
    const problems = elicitationSchemaProblems(params.requestedSchema);
    return problems.length > 0 ? { rule: 'relay:invalid-schema', message: `Invalid requestedSchema: ${problems.join('; ')}` } : undefined;
  }
  if (typeof params.url !== 'string' || typeof params.elicitationId !== 'string') {
    return { rule: 'relay:invalid-request', message: 'A url-mode elicitation needs url and elicitationId' };
  }
  if (params.elicitationId.length > MAX_ELICITATION_ID_CHARS) {
    // Kept as a key until its completion (UrlElicitations) once the host accepts.
    return { rule: 'relay:invalid-request', message: `A url-mode elicitation's elicitationId is over ${MAX_ELICITATION_ID_CHARS} characters` };
  }
  if (!isWebUrl(params.url)) {
    // A user is asked to open it: javascript:, file: or data: URLs are not a web page to visit.
    return { rule: 'relay:invalid-request', message: 'A url-mode elicitation needs an http or https URL' };
  }
  return undefined;
}

function isWebUrl(url: string): boolean {
  return URL.canParse(url) && ['http:', 'https:'].includes(new URL(url).protocol);
}
