/**
 * The changes feed (`searchCompanyChanges`): the changes recorded at import, read by CNPJs, kinds
 * and company search filters.
 */
import { ServiceError } from '../../errors.ts';
import type { Handler } from '../../pipeline/handler.ts';

export function createChangeHandlers() {
  const searchCompanyChanges: Handler<'searchCompanyChanges'> = async () => {
    throw new ServiceError('not_implemented', 'The changes feed is not built yet.');
  };
  return { searchCompanyChanges };
}
