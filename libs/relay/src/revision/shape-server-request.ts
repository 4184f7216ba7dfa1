import {
  BLOCK_LISTS_ADDED,
  fieldsToDrop,
  isOlderRevision,
  lacks,
  MULTI_SELECT_ADDED,
  REQUEST_ADDED,
  SAMPLING_TOOLS_ADDED,
  TITLED_CHOICES_ADDED,
  TOOL_BLOCKS,
  URL_ELICITATION_ADDED,
  type OlderRevision,
} from './revision-fields.js';
import { isObject, shapedEach, shapedMessage, shapedValues, without } from './shape-content.js';

type Item = Record<string, unknown>;

/** A request the host's revision cannot carry without changing what it asks; `lacking` names what is missing. */
export class Unanswerable {
  constructor(readonly lacking: string) {}
}

/**
 * A request the gateway sends a host (sampling/createMessage, elicitation/create,
 * roots/list) as the host's negotiated revision defines it, as results and notifications
 * are (shape-for-revision.ts). What the revision lacks is left out or mapped to what it has;
 * where leaving it out would change the question (a method the revision does not have, tool
 * use in sampling, url mode, a multi-select field), the host cannot be asked it at all:
 * Unanswerable, and the relay's fallbacks apply. The newest revision gets the same object.
 */
export function shapeServerRequest(method: string, params: Item, version: string): Item | Unanswerable {
  if (!isOlderRevision(version)) return params;
  const added = REQUEST_ADDED[method];
  if (added && lacks(version, added)) return new Unanswerable(method);
  if (method === 'sampling/createMessage') return shapedSampling(params, version);
  if (method === 'elicitation/create') return shapedElicitation(params, version);
  // roots/list carries nothing but _meta in every revision.
  return params;
}

function shapedSampling(params: Item, version: OlderRevision): Item | Unanswerable {
  const messages = Array.isArray(params.messages) ? params.messages : undefined;
  if (lacks(version, SAMPLING_TOOLS_ADDED) && usesTools(params, messages)) return new Unanswerable('tool use in sampling');
  const trimmed = without(params, fieldsToDrop(version, 'samplingRequest'));
  if (!messages) return trimmed;
  const single = lacks(version, BLOCK_LISTS_ADDED) ? oneBlockEach(messages) : messages;
  const shaped = shapedEach(single, (message) => shapedMessage(message, version));
  return shaped === messages ? trimmed : { ...trimmed, messages: shaped };
}

function usesTools(params: Item, messages: unknown[] | undefined): boolean {
  if (params.tools !== undefined || params.toolChoice !== undefined) return true;
  return (messages ?? []).some((m) => isObject(m) && blocksOf(m.content).some((b) => isObject(b) && TOOL_BLOCKS.has(b.type)));
}

const blocksOf = (content: unknown): unknown[] => (Array.isArray(content) ? content : [content]);

/**
 * Before 2025-11-25 a sampling message holds one block: a message holding a list becomes
 * one message per block, in order and with its role, which says the same to a model.
 */
function oneBlockEach(messages: unknown[]): unknown[] {
  if (!messages.some((m) => isObject(m) && Array.isArray(m.content))) return messages;
  return messages.flatMap((m) => (isObject(m) && Array.isArray(m.content) ? m.content.map((content: unknown) => ({ ...m, content })) : [m]));
}

function shapedElicitation(params: Item, version: OlderRevision): Item | Unanswerable {
  if (lacks(version, URL_ELICITATION_ADDED) && params.mode === 'url') return new Unanswerable('url-mode elicitation');
  const schema = params.requestedSchema;
  const fields = isObject(schema) && isObject(schema.properties) ? schema.properties : undefined;
  if (fields && lacks(version, MULTI_SELECT_ADDED) && Object.values(fields).some((f) => isObject(f) && f.type === 'array')) {
    return new Unanswerable('multi-select fields in elicitation forms');
  }
  // `mode` is only ever form here: before 2025-11-25 every elicitation was a form.
  const trimmed = without(params, fieldsToDrop(version, 'elicitRequest'));
  if (!isObject(schema)) return trimmed;
  let shapedSchema = without(schema, fieldsToDrop(version, 'requestedSchema'));
  const shapedFields = fields && shapedValues(fields, (field) => shapedField(field, version));
  if (shapedFields !== fields) shapedSchema = { ...shapedSchema, properties: shapedFields };
  return shapedSchema === schema ? trimmed : { ...trimmed, requestedSchema: shapedSchema };
}

/**
 * A form field as `version` defines it: without a `default` (but on a boolean), and a
 * titled choice (`oneOf` of const and title) as the `enum` with `enumNames` that 2025-06-18
 * offered for the same thing.
 */
function shapedField(field: Item, version: OlderRevision): Item {
  const trimmed = field.type === 'boolean' ? field : without(field, fieldsToDrop(version, 'formField'));
  if (!Array.isArray(trimmed.oneOf) || trimmed.enum !== undefined || !lacks(version, TITLED_CHOICES_ADDED)) return trimmed;
  const { oneOf, ...rest } = trimmed;
  const choices = (oneOf as unknown[]).filter(isObject);
  return { ...rest, enum: choices.map((c) => c.const), enumNames: choices.map((c) => (typeof c.title === 'string' ? c.title : String(c.const))) };
}
