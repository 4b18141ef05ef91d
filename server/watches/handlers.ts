/** Watches: create, list, get, resume and delete a workspace's watches on registry changes. */
import { ServiceError } from '../errors.ts';
import type { Handler } from '../pipeline/handler.ts';

const notYet = (): never => {
  throw new ServiceError('not_implemented', 'Watches are not built yet.');
};

export function createWatchHandlers() {
  const createWatch: Handler<'createWatch'> = async () => notYet();
  const listWatches: Handler<'listWatches'> = async () => notYet();
  const getWatch: Handler<'getWatch'> = async () => notYet();
  const resumeWatch: Handler<'resumeWatch'> = async () => notYet();
  const deleteWatch: Handler<'deleteWatch'> = async () => notYet();
  return { createWatch, listWatches, getWatch, resumeWatch, deleteWatch };
}
