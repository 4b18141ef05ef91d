/**
 * Compile-time proof that the official driver's Collection satisfies the storage port, so the
 * MongoDB adapter can hand out driver collections unchanged and repository code typed against
 * the port runs on both adapters. If a port signature drifts from the driver's, this stops
 * type-checking. Nothing imports it at run time.
 */
import type { Collection as DriverCollection } from 'mongodb';
import type { Collection } from './port.ts';

interface Probe {
  _id: string;
  n: number;
}

export const driverSatisfiesPort: (collection: DriverCollection<Probe>) => Collection<Probe> = (collection) => collection;

/** Compile-time proof that the port's allow-list refuses what not every store honours. Never called. */
export function portRefuses(collection: Collection<Probe>): void {
  // @ts-expect-error $where is not an operator of the port
  void collection.find({ $where: 'this.n > 1' });
  // @ts-expect-error $expr is not an operator of the port
  void collection.countDocuments({ $expr: { $gt: ['$n', 1] } });
  // @ts-expect-error $rename is not an update operator of the port
  void collection.updateOne({ _id: 'x' }, { $rename: { n: 'm' } });
  // @ts-expect-error $lookup is not a stage of the port
  void collection.aggregate([{ $lookup: { from: 'other', localField: 'n', foreignField: 'n', as: 'o' } }]);
  // @ts-expect-error no sparse indexes (FerretDB has none)
  void collection.createIndex({ n: 1 }, { sparse: true });
}
