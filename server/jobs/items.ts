/**
 * A job's items, checked before anything is queued: each input against the body schema of the
 * job's operation, with the pipeline's own validators and messages, so an item that would fail
 * as a synchronous call is refused with the index that names it.
 */
import { operations, type OperationId } from '../../shared/operations/index.ts';
import { JOB_OPERATIONS, type JobOperation } from '../../shared/schemas/jobs.ts';
import { invalidRequest } from '../errors.ts';
import { compileValidators, type Validate } from '../pipeline/validate.ts';

let validate: Validate | null = null;

/** Compiled on first use: only the operations a job may run. */
function validator(): Validate {
  validate ??= compileValidators(Object.fromEntries(JOB_OPERATIONS.map((id) => [id, operations[id as OperationId]])));
  return validate;
}

export function checkItems(operation: JobOperation, items: Array<{ itemId?: string; input: Record<string, unknown> }>): Array<{ itemId: string; input: unknown }> {
  const check = validator();
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
