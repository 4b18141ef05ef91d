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
