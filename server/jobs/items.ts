/**
 * A job's items, checked before anything is queued: each input against the body schema of the
 * job's operation, with the pipeline's own validators and messages (`CheckBody`), so an item
 * that would fail as a synchronous call is refused with the index that names it.
 */
import type { JobOperation } from '../../shared/schemas/jobs.ts';
import { invalidRequest } from '../lib/errors.ts';

/**
 * The pipeline's validator of request bodies (`compileValidators`), given by the composition root
 * so that jobs check an item exactly as a synchronous call is checked without knowing the pipeline.
 */
export type CheckBody = (operationId: string, part: 'body', value: unknown) => { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

export function checkItems(check: CheckBody, operation: JobOperation, items: Array<{ itemId?: string; input: Record<string, unknown> }>): Array<{ itemId: string; input: unknown }> {
  const seen = new Set<string>();
  return items.map((item, index) => {
    const result = check(operation, 'body', item.input);
    if (!result.ok) throw invalidRequest(`items[${index}].input: ${result.message}`);
    const itemId = item.itemId ?? String(index);
    if (seen.has(itemId)) throw invalidRequest(`items[${index}].itemId "${itemId}" is also the id of an earlier item; item ids must be unique`);
    seen.add(itemId);
    return { itemId, input: result.value };
  });
}
