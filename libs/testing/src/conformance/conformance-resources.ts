/** The conformance fixture's resources and resource template, and what reading them returns. */
import {
  ResourceNotFoundError,
  UriTemplate,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplateType,
} from '@modelcontextprotocol/server';
import { TINY_PNG_BASE64 } from '../fixtures/fixture-content.js';
import type { SessionState } from './conformance-state.js';

export const STATIC_TEXT_URI = 'test://static-text';
export const STATIC_BINARY_URI = 'test://static-binary';
export const WATCHED_URI = 'test://watched-resource';
export const DATA_TEMPLATE = 'test://template/{id}/data';

const STATIC_TEXT = 'This is the content of the static text resource.';

export const RESOURCES: Resource[] = [
  { uri: STATIC_TEXT_URI, name: 'static-text', description: 'A fixed text resource', mimeType: 'text/plain' },
  { uri: STATIC_BINARY_URI, name: 'static-binary', description: 'A fixed binary resource (a 1x1 PNG)', mimeType: 'image/png' },
  {
    uri: WATCHED_URI,
    name: 'watched-resource',
    description: 'A text resource that update_watched_resource changes; subscribe to hear about it',
    mimeType: 'text/plain',
  },
];

export const TEMPLATES: ResourceTemplateType[] = [
  {
    uriTemplate: DATA_TEMPLATE,
    name: 'template-data',
    description: 'JSON data for any id',
    mimeType: 'application/json',
  },
];

const dataTemplate = new UriTemplate(DATA_TEMPLATE);

export function readResource(uri: string, state: SessionState): ReadResourceResult {
  switch (uri) {
    case STATIC_TEXT_URI:
      return { contents: [{ uri, mimeType: 'text/plain', text: STATIC_TEXT }] };
    case STATIC_BINARY_URI:
      return { contents: [{ uri, mimeType: 'image/png', blob: TINY_PNG_BASE64 }] };
    case WATCHED_URI:
      return { contents: [{ uri, mimeType: 'text/plain', text: state.watchedText }] };
  }
  const id = dataTemplate.match(uri)?.['id'];
  if (typeof id === 'string' && id.length > 0) {
    return {
      contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }],
    };
  }
  throw new ResourceNotFoundError(uri);
}
