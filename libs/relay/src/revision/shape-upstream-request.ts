import { fieldsToDrop, isOlderRevision } from './revision-fields.js';
import { isObject, without } from './shape-content.js';

type Item = Record<string, unknown>;

/**
 * A host's request as the upstream's negotiated revision defines it, as what reaches a host
 * is shaped for the host's (shape-for-revision.ts): a host on a newer revision than the
 * upstream may send fields the upstream's revision does not have, and a server with a strict
 * schema refuses the whole request for one of them (-32602, "unrecognized key"). What a
 * revision lacks is left out where that asks the same of a server that never knew it:
 * completion/complete's `context` (2025-06-18; an older server completes without the other
 * arguments, as it always did) and a prompt reference's `title`. `task` (2025-11-25) is left
 * out of every request already (gateway-dispatcher.ts); no other request a host sends an
 * upstream gained a field after 2024-11-05. An upstream on the newest revision, or not yet
 * connected, gets the same object.
 */
export function shapeUpstreamRequest(method: string, params: Item, version: string | undefined): Item {
  if (method !== 'completion/complete' || version === undefined || !isOlderRevision(version)) return params;
  const trimmed = without(params, fieldsToDrop(version, 'completeRequest'));
  const ref = trimmed.ref;
  if (!isObject(ref) || ref.type !== 'ref/prompt') return trimmed;
  const shapedRef = without(ref, fieldsToDrop(version, 'promptReference'));
  return shapedRef === ref ? trimmed : { ...trimmed, ref: shapedRef };
}
